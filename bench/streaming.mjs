// The streaming phase of `npm run bench` (`--phases=streaming` runs it alone): streamed replies
// through the hub against the baseline relay (bench/baseline.mjs forwards start / delta / end the
// same way, without log, limits or resume), then a resume storm on the hub alone.
//
// - Saturation: `saturation` streams (one per client), each a closed loop (a delta, wait until the
//   client has it, the next): deltas per second, one replica and two over Redis (runtimes on one,
//   clients on the other, so every delta crosses Redis).
// - Latency: `concurrent` streams × `rate` deltas/s offered (open loop, over two generator
//   processes); a delta's latency is from the runtime's emit to the client's receipt, read on the
//   generator's one clock (both ends live in it).
// - Resume storm: `storm` clients each with an open stream of 11 deltas (~1 KB) reconnect at once;
//   seconds until every one has its snapshot (`message:start` with all of it). Before it, the hub's
//   RSS with those streams open against without them gives the memory per open stream.
// Options: --stream-concurrent=<n> (1000), --stream-rate=<per s> (25), --stream-saturation=<n> (200),
// --stream-storm=<n> (2000; 0 leaves out the storm and the memory row), --stream-replicas=1,2 (which
// of the two measurements to run: `2` alone for a quicker look at the two-replica rows),
// --stream-mixed=false (leaves out the hub's slices of mixed deltas: reasoning, tool input, text). Bounded:
// every generator call has a timeout, every slice a fixed length.

/** The pseudo-kind of the hub's slices with mixed deltas (text, reasoning, tool input). */
const MIXED = 'hub-mixed';

/** Hub settings of the streaming phase: its per-socket delta bucket out of the way of the load, and streams kept open across slices. */
export const STREAM_HUB_ENV = {
  STREAM_DELTA_RATE_PER_S: '1000000',
  STREAM_DELTA_RATE_BURST: '1000000',
  STREAM_MAX_OPEN: '5000',
  STREAM_MAX_BYTES: '4194304',
  STREAM_IDLE_TIMEOUT_MS: '900000',
  STREAM_MAX_DURATION_MS: '3600000',
};

/** The load of the phase, from the command line. */
export function streamLoad(args) {
  return {
    concurrent: Number(args['stream-concurrent'] ?? 1000),
    rate: Number(args['stream-rate'] ?? 25),
    saturation: Number(args['stream-saturation'] ?? 200),
    storm: Number(args['stream-storm'] ?? 2000),
    replicas: new Set(
      String(args['stream-replicas'] ?? '1,2')
        .split(',')
        .map(Number),
    ),
    mixed: args['stream-mixed'] !== 'false',
    fillDeltas: 10,
    fillBytes: 100,
  };
}

/**
 * Runs the phase. `ctx` is bench/run.mjs's toolbox: { gen, gen2, startServer, startRedis, stop,
 * alternate, median, settledRss, log, agentIds, apiKey, secret, windowMs, kinds }. Returns the rows' figures.
 */
export async function streamingPhase(ctx, load) {
  const out = { hub: {}, baseline: {}, mixed: {}, load };
  const one = {};
  if (load.replicas.has(1))
    try {
      for (const kind of ctx.kinds) one[kind] = await ctx.startServer(kind, undefined, STREAM_HUB_ENV);
      const m = await measure(ctx, load, (kind) => [one[kind], one[kind]], '1 replica', null);
      for (const kind of ctx.kinds)
        Object.assign(out[kind], { dps1: m[kind].dps, p50: m[kind].p50, p99: m[kind].p99, lost1: m[kind].lost, gaps1: m[kind].gaps });
      if (m[MIXED]) Object.assign(out.mixed, { dps1: m[MIXED].dps, p99: m[MIXED].p99, lost1: m[MIXED].lost });
    } finally {
      await ctx.gen.call('closeAll').catch(() => {});
      await ctx.gen2.call('closeAll').catch(() => {});
      for (const server of Object.values(one)) await ctx.stop(server.child);
    }

  const two = {};
  if (load.replicas.has(2)) {
    const redis = await ctx.startRedis();
    try {
      for (const kind of ctx.kinds)
        two[kind] = [await ctx.startServer(kind, redis.url, STREAM_HUB_ENV), await ctx.startServer(kind, redis.url, STREAM_HUB_ENV)];
      const m = await measure(ctx, load, (kind) => two[kind], '2 replicas', redis.child.pid);
      for (const kind of ctx.kinds)
        Object.assign(out[kind], { dps2: m[kind].dps, p50c: m[kind].p50, p99c: m[kind].p99, lost2: m[kind].lost, gaps2: m[kind].gaps });
      if (m[MIXED]) Object.assign(out.mixed, { dps2: m[MIXED].dps, p99c: m[MIXED].p99, lost2: m[MIXED].lost });
    } finally {
      await ctx.gen.call('closeAll').catch(() => {});
      await ctx.gen2.call('closeAll').catch(() => {});
      for (const server of Object.values(two).flat()) await ctx.stop(server.child);
      await ctx.stop(redis.child);
    }
  }
  if (load.storm === 0) return out;

  // The resume storm and the memory of open streams: the hub alone (the baseline has no resume).
  const hub = await ctx.startServer('hub', undefined, STREAM_HUB_ENV);
  try {
    const r = await resumeStorm(ctx, load, [hub, hub], hub.pid, '1 replica');
    Object.assign(out.hub, { bytesPerStream: r.bytesPerStream, streamTextBytes: r.streamTextBytes, storm1: r.lastStorm });
  } finally {
    await ctx.gen.call('closeAll').catch(() => {});
    await ctx.gen2.call('closeAll').catch(() => {});
    await ctx.stop(hub.child);
  }
  const redis2 = await ctx.startRedis();
  const pair = [];
  try {
    pair.push(await ctx.startServer('hub', redis2.url, STREAM_HUB_ENV), await ctx.startServer('hub', redis2.url, STREAM_HUB_ENV));
    out.hub.storm2 = (await resumeStorm(ctx, load, pair, null, '2 replicas')).lastStorm;
  } finally {
    await ctx.gen.call('closeAll').catch(() => {});
    await ctx.gen2.call('closeAll').catch(() => {});
    for (const server of pair) await ctx.stop(server.child);
    await ctx.stop(redis2.child);
  }
  return out;
}

/**
 * Saturation and latency of both servers, in alternating slices; `serversOf(kind)` = [runtimes on,
 * clients on]. With the hub among them, `hub-mixed` is the hub again with streams whose deltas take
 * a reasoning part, a tool call's input and a text part in turn (docs/parts.md), against its text-only slices.
 * Saturation slices also read the CPU per delta of the servers (summed) and of `redisPid`'s Redis:
 * steadier than deltas/s when the machine's two cores are shared by servers, Redis and generator.
 */
async function measure(ctx, load, serversOfKind, label, redisPid) {
  const { gen, gen2 } = ctx;
  const kinds = ctx.kinds.includes('hub') && load.mixed ? [...ctx.kinds, MIXED] : ctx.kinds;
  const serversOf = (kind) => serversOfKind(kind === MIXED ? 'hub' : kind);
  for (const kind of kinds) {
    const [agentsOn, clientsOn] = serversOf(kind);
    const common = { agentIds: ctx.agentIds, secret: ctx.secret };
    await gen.call('agents', { url: agentsOn.url, agentIds: ctx.agentIds, apiKey: ctx.apiKey, group: `${kind}-sat` });
    await connected(
      gen.call('streamClients', { url: clientsOn.url, count: load.saturation, tag: `ss-${kind}`, group: `${kind}-sat`, ...common }),
    );
    await gen.call('streamOpen', { group: `${kind}-sat`, mixed: kind === MIXED });
    for (const [i, g] of [gen, gen2].entries()) {
      await g.call('agents', { url: agentsOn.url, agentIds: ctx.agentIds, apiKey: ctx.apiKey, group: `${kind}-lat` });
      await connected(
        g.call('streamClients', { url: clientsOn.url, count: load.concurrent / 2, tag: `sl${i}-${kind}`, group: `${kind}-lat`, ...common }),
      );
      await g.call('streamOpen', { group: `${kind}-lat`, mixed: kind === MIXED });
    }
  }
  const half = ctx.windowMs / 2;
  const pids = (kind) => [...new Set(serversOf(kind).map((server) => server.pid))];
  const sat = await ctx.alternate(async (kind) => {
    const cpu = () => pids(kind).reduce((sum, pid) => sum + ctx.cpuMs(pid), 0);
    const redisCpu = () => (redisPid === null ? 0 : ctx.cpuMs(redisPid));
    const [cpu0, redis0] = [cpu(), redisCpu()];
    const r = await gen.call('streamClosedLoop', { warmupMs: 1000, durationMs: half, group: `${kind}-sat` });
    // CPU counts the warm-up too: per delta over every delta the slice sent.
    const deltas = r.sent;
    return { ...r, cpuPerDelta: (cpu() - cpu0) / deltas, redisCpuPerDelta: (redisCpu() - redis0) / deltas };
  }, kinds);
  const lat = await ctx.alternate(async (kind) => {
    const parts = await Promise.all(
      [gen, gen2].map((g) =>
        g.call('streamOpenLoop', { ratePerStream: load.rate, warmupMs: 1000, durationMs: half, group: `${kind}-lat` }),
      ),
    );
    const latencies = parts.flatMap((p) => p.latencies).sort((a, b) => a - b);
    // A slice whose deltas all arrived too late (an overloaded server) has no percentile: ∞.
    const pct = (q) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? Infinity;
    return { p50: pct(0.5), p99: pct(0.99), samples: latencies.length, lost: parts.reduce((n, p) => n + p.lost, 0) };
  }, kinds);
  const out = {};
  for (const kind of kinds) {
    const o = {
      dps: ctx.median(sat[kind].map((r) => r.perSecond)),
      p50: ctx.median(lat[kind].map((r) => r.p50)),
      p99: ctx.median(lat[kind].map((r) => r.p99)),
      lost: lat[kind].reduce((n, r) => n + r.lost, 0) + sat[kind].reduce((n, r) => n + r.stalls, 0),
      gaps: sat[kind].at(-1).gaps,
      cpuPerDelta: ctx.median(sat[kind].map((r) => r.cpuPerDelta)),
      redisCpuPerDelta: ctx.median(sat[kind].map((r) => r.redisCpuPerDelta)),
    };
    out[kind] = o;
    ctx.log(
      `${kind} streaming ${label}: ${o.dps.toFixed(0)} deltas/s at saturation (slices ${sat[kind].map((r) => r.perSecond.toFixed(0)).join(', ')}; ` +
        `${load.saturation} streams; ${(o.cpuPerDelta * 1000).toFixed(1)} µs server CPU${redisPid === null ? '' : ` and ${(o.redisCpuPerDelta * 1000).toFixed(1)} µs Redis CPU`} per delta); at ${load.concurrent} streams × ${load.rate}/s p50 ${o.p50.toFixed(2)} ms, p99 ${o.p99.toFixed(2)} ms ` +
        `(slices ${lat[kind].map((r) => r.p99.toFixed(2)).join(', ')}; ${lat[kind].reduce((n, r) => n + r.samples, 0)} samples); ${o.lost} lost, ${o.gaps} gaps`,
    );
  }
  return out;
}

/** `storm` clients with an open stream each reconnect at once; with `memoryPid`, RSS per open stream first. */
async function resumeStorm(ctx, load, [agentsOn, clientsOn], memoryPid, label) {
  const gens = [ctx.gen, ctx.gen2];
  const result = {};
  for (const [i, g] of gens.entries()) {
    await g.call('agents', { url: agentsOn.url, agentIds: ctx.agentIds, apiKey: ctx.apiKey, group: 'rs' });
    await connected(
      g.call('streamClients', {
        url: clientsOn.url,
        count: load.storm / 2,
        agentIds: ctx.agentIds,
        secret: ctx.secret,
        tag: `rs${i}`,
        group: 'rs',
      }),
    );
  }
  const before = memoryPid === null ? undefined : await ctx.settledRss(memoryPid);
  await Promise.all(gens.map((g) => g.call('streamOpen', { group: 'rs' })));
  const filled = await Promise.all(
    gens.map((g) => g.call('streamFill', { deltas: load.fillDeltas, bytes: load.fillBytes, group: 'rs' }, 120_000)),
  );
  if (before) {
    const after = await ctx.settledRss(memoryPid);
    result.bytesPerStream = (after.retained - before.retained) / load.storm;
    result.streamTextBytes = filled[0].bytesEach;
    ctx.log(
      `hub ${label}: ${load.storm} open streams of ${filled[0].bytesEach} B of text, RSS +${((after.retained - before.retained) / 2 ** 20).toFixed(1)} MiB, ${(result.bytesPerStream / 1024).toFixed(2)} KiB each`,
    );
  }
  const storms = await Promise.all(gens.map((g) => g.call('streamResumeStorm', { timeoutMs: 60_000, group: 'rs' }, 90_000)));
  const storm = {
    seconds: Math.max(...storms.map((s) => s.seconds)),
    complete: storms.reduce((n, s) => n + s.complete, 0),
    wrong: storms.reduce((n, s) => n + s.wrong, 0),
    refused: storms.reduce((n, s) => n + s.refused, 0),
    total: load.storm,
  };
  ctx.log(
    `hub ${label}: resume storm, ${storm.complete}/${storm.total} clients had their snapshot after ${storm.seconds.toFixed(2)} s (${storm.wrong} wrong, ${storm.refused} reconnects refused)`,
  );
  await Promise.all(gens.map((g) => g.call('streamEnd', { group: 'rs' })));
  return { ...result, lastStorm: storm };
}

async function connected(call) {
  const r = await call;
  if (r.failed > 0) throw new Error(`${r.failed} stream clients failed to connect (${r.firstError})`);
  return r;
}

/** The phase's rows (markdown), hub against baseline, with the targets. */
export function streamingTable({ hub: h, baseline: b, mixed: x = {}, load }, { comparisonRows, format }) {
  if (h.dps1 === undefined && h.dps2 === undefined && h.storm1 === undefined) return '';
  const { rows, row, ratioRow } = comparisonRows(h, b);
  ratioRow(`Deltas/s at saturation, 1 replica (${load.saturation} streams, closed loop)`, 'dps1', 0, '≥ 0.9', (r) => r >= 0.9);
  ratioRow(`Deltas/s at saturation, 2 replicas over Redis (each delta crosses both)`, 'dps2', 0, '≥ 0.9', (r) => r >= 0.9);
  const at = `${load.concurrent.toLocaleString('en-US')} streams × ${load.rate}/s`;
  ratioRow(`p50 per delta (ms, runtime emit → client), ${at}, 1 replica`, 'p50', 2, '—');
  ratioRow(`p99 per delta (ms), ${at}, 1 replica`, 'p99', 2, '≤ 1.25', (r) => r <= 1.25);
  ratioRow(`p50 per delta (ms), ${at}, 2 replicas`, 'p50c', 2, '—');
  ratioRow(`p99 per delta (ms), ${at}, 2 replicas`, 'p99c', 2, '≤ 1.25', (r) => r <= 1.25);
  row(
    'Deltas lost or stalled (1 replica / 2 replicas)',
    `${format(h.lost1)} / ${format(h.lost2)}`,
    `${format(b.lost1)} / ${format(b.lost2)}`,
    '—',
    '0 (hub)',
    h.lost1 === undefined ? undefined : h.lost1 + h.lost2 === 0,
  );
  // Mixed deltas against the hub's text-only slices of the same run (docs/parts.md).
  for (const [key, label, target, ok] of [
    ['dps1', 'Deltas/s at saturation, mixed parts ÷ text only, 1 replica', '0.9–1.1', (r) => r >= 0.9 && r <= 1.1],
    ['dps2', 'Deltas/s at saturation, mixed parts ÷ text only, 2 replicas', '0.9–1.1', (r) => r >= 0.9 && r <= 1.1],
    ['p99', `p99 per delta, mixed parts ÷ text only, ${at}, 1 replica`, '0.9–1.1', (r) => r >= 0.9 && r <= 1.1],
    ['p99c', `p99 per delta, mixed parts ÷ text only, ${at}, 2 replicas`, '0.9–1.1', (r) => r >= 0.9 && r <= 1.1],
  ]) {
    if (x[key] === undefined || h[key] === undefined) continue;
    const ratio = x[key] / h[key];
    row(
      label,
      `${format(x[key], key.startsWith('p') ? 2 : 0)} (text only ${format(h[key], key.startsWith('p') ? 2 : 0)})`,
      '—',
      format(ratio, 2),
      target,
      ok(ratio),
    );
  }
  if (h.bytesPerStream !== undefined) {
    row(
      `Memory per open stream (KiB of hub RSS; ${h.streamTextBytes} B of text each, ${load.storm} open, 1 replica)`,
      format(h.bytesPerStream / 1024, 2),
      '—',
      '—',
      'stated',
      undefined,
    );
  }
  for (const [key, label] of [
    ['storm1', '1 replica'],
    ['storm2', '2 replicas'],
  ]) {
    const s = h[key];
    if (!s) continue;
    const ok = s.complete === s.total && s.wrong === 0;
    row(
      `Resume storm: s until all ${s.total.toLocaleString('en-US')} clients reconnecting mid-stream have their snapshot, ${label}`,
      format(ok ? s.seconds : Infinity, 2),
      '—',
      '—',
      'all, none wrong',
      ok,
    );
  }
  const note =
    `Streaming load: ${load.saturation} streams in closed loop (one delta in flight each) for deltas/s; ${load.concurrent.toLocaleString('en-US')} ` +
    `streams × ${load.rate} deltas/s offered (open loop, two generator processes) for the latency per delta, read from the runtime's emit to ` +
    `the client's receipt on the generator's clock (both ends live in it). Deltas are sent without an ack, as the agent SDK sends most. ` +
    `The baseline forwards start/delta/end with a seq per stream and nothing else (no log, limits or resume). Memory per open stream: ` +
    `the hub's retained RSS with the storm's streams open against the same clients without them. The resume storm drops every client ` +
    `and reconnects it at once; done when each has its stream's message:start with all ${load.fillDeltas + 1} deltas.`;
  return [
    '| metric (streamed replies) | hub | baseline | hub ÷ baseline | target | result |',
    '|---|---|---|---|---|---|',
    ...rows,
    '',
    note,
  ].join('\n');
}
