// How `npm run bench` compares two servers' relay (bench/run.mjs and its phases): both measured in
// alternating slices, the standard load connected to each, and closed-loop throughput with the CPU
// and allocation behind it, then open-loop latency, as the median over slices. `ctx` is run.mjs's
// toolbox (its settings: agentIds, apiKey, secret, load, warmupMs, windowMs, kinds, rounds; log).
import { cpuMs, idleMs } from './proc.mjs';
import { allocatedBytes } from './run-processes.mjs';

export const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
};
const percentile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];

/**
 * Runs `measure(kind)` for both servers in alternating slices (B H, H B, B H …), so load from
 * anything else on the machine falls on both alike, and returns the slices per kind.
 */
export async function alternate(measure, kinds, rounds) {
  const slices = Object.fromEntries(kinds.map((kind) => [kind, []]));
  for (let round = 0; round < rounds; round++) {
    for (const kind of round % 2 === 0 ? kinds : [...kinds].reverse()) slices[kind].push(await measure(kind));
  }
  return slices;
}

/** Connects the standard load (runtimes on `agentsOn`, clients on `clientsOn`) as group `kind`. */
export async function connectLoad(ctx, gen, kind, agentsOn, clientsOn, tag) {
  await gen.call('agents', { url: agentsOn.url, agentIds: ctx.agentIds, apiKey: ctx.apiKey, group: kind });
  const c = await gen.call('clients', {
    url: clientsOn.url,
    count: ctx.load.clients,
    agentIds: ctx.agentIds,
    secret: ctx.secret,
    tag: `${tag}-${kind}`,
    group: kind,
  });
  if (c.connected !== ctx.load.clients) throw new Error(`${kind}: only ${c.connected} clients connected (${c.firstError})`);
}

/**
 * Closed-loop throughput and open-loop latency, alternating between the two servers. `redisPid`,
 * the redis-server both sides share, has its CPU per round trip counted apart: the slices alternate,
 * so what it spends in a slice is (but for presence refreshes and canaries) that side's.
 */
export async function relayMeasurements(ctx, gen, serversOf, label, kinds = ctx.kinds, redisPid = null) {
  const cpusOf = (kind) => serversOf(kind).map((server) => cpuMs(server.pid));
  const redisCpu = () => (redisPid === null ? 0 : cpuMs(redisPid));
  const allocatedOf = async (kind) => (await Promise.all(serversOf(kind).map(allocatedBytes))).reduce((sum, n) => sum + n, 0);
  const slices = (measure) => alternate(measure, kinds, ctx.rounds);
  const tp = await slices(async (kind) => {
    const [cpus0, redis0, gen0, idle0, bytes0] = [cpusOf(kind), redisCpu(), cpuMs(gen.child.pid), idleMs(), await allocatedOf(kind)];
    const r = await gen.call('closedLoop', { warmupMs: ctx.warmupMs / 2, durationMs: ctx.windowMs / 2, group: kind });
    const [cpus1, redis1, gen1, idle1, bytes1] = [cpusOf(kind), redisCpu(), cpuMs(gen.child.pid), idleMs(), await allocatedOf(kind)];
    const per = (delta) => delta / (r.total || 1);
    const serverCpuPerRt = cpus1.map((ms, i) => per(ms - cpus0[i]));
    return {
      ...r,
      cpuPerRt: serverCpuPerRt.reduce((sum, ms) => sum + ms, 0),
      serverCpuPerRt,
      redisCpuPerRt: per(redis1 - redis0),
      genCpuPerRt: per(gen1 - gen0),
      idlePerRt: per(idle1 - idle0),
      bytesPerRt: per(bytes1 - bytes0),
    };
  });
  const lat = await slices((kind) =>
    gen.call('openLoop', { ratePerS: ctx.load.offeredPerS, warmupMs: 1000, durationMs: ctx.windowMs / 2, group: kind }),
  );
  const out = {};
  for (const kind of kinds) {
    const latencies = lat[kind].flatMap((r) => r.latencies).sort((a, b) => a - b);
    out[kind] = {
      rt: median(tp[kind].map((r) => r.perSecond)),
      rtSlices: tp[kind].map((r) => Math.round(r.perSecond)),
      rtErrors: tp[kind].reduce((n, r) => n + r.errors, 0),
      cpuPerRt: median(tp[kind].map((r) => r.cpuPerRt)),
      redisCpuPerRt: median(tp[kind].map((r) => r.redisCpuPerRt)),
      genCpuPerRt: median(tp[kind].map((r) => r.genCpuPerRt)),
      serverCpuPerRt: tp[kind][0].serverCpuPerRt.map((_, i) => median(tp[kind].map((r) => r.serverCpuPerRt[i]))),
      idlePerRt: median(tp[kind].map((r) => r.idlePerRt)),
      kbPerRt: median(tp[kind].map((r) => r.bytesPerRt)) / 1000,
      // Latency per slice, then the median over slices (like throughput): one slice that shared the
      // machine with a burst of other work moves a pooled p99 by itself. The pooled one is logged.
      p50: median(lat[kind].map((r) => r.p50)),
      p99: median(lat[kind].map((r) => r.p99)),
      p99Slices: lat[kind].map((r) => r.p99),
      p99Pooled: percentile(latencies, 0.99),
      latSamples: latencies.length,
      latErrors: lat[kind].reduce((n, r) => n + r.errors + r.lost, 0),
    };
    const o = out[kind];
    ctx.log(
      `${kind} ${label}: ${o.rt.toFixed(0)} round trips/s (slices ${o.rtSlices.join(', ')}; ${o.rtErrors} errors), ` +
        `${o.cpuPerRt.toFixed(3)} ms CPU${o.serverCpuPerRt.length > 1 ? ` (${o.serverCpuPerRt.map((ms) => ms.toFixed(3)).join(' + ')})` : ''}${redisPid === null ? '' : ` (and Redis ${o.redisCpuPerRt.toFixed(3)} ms)`} and ${o.kbPerRt.toFixed(1)} KB allocated each ` +
        `(the load generator ${o.genCpuPerRt.toFixed(3)} ms CPU, the machine idle ${o.idlePerRt.toFixed(3)} ms); ` +
        `at ${ctx.load.offeredPerS}/s p50 ${o.p50.toFixed(2)} ms, p99 ${o.p99.toFixed(2)} ms ` +
        `(slices ${o.p99Slices.map((v) => v.toFixed(2)).join(', ')}; pooled ${o.p99Pooled.toFixed(2)}; ` +
        `${o.latSamples} samples, ${o.latErrors} errors/lost)`,
    );
  }
  return out;
}
