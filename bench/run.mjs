// `npm run bench`: the hub against the baseline relay (bench/baseline.mjs) under identical load
// generators, loopback only, every phase bounded in count and time. Prints a markdown table of
// hub ÷ baseline ratios against the targets and writes it to bench/results/latest.md, and, after a
// full run against the baseline (default phases, no --versus or --hub), into docs/benchmarks.md
// between its `bench:latest` markers.
//
// Each server runs in its own process (`node dist/main.js` for the hub), the generators in one or
// two more; for the two-replica runs a private redis-server is started on a free port (never
// 6379). The hub runs with the node flags of deploy/Dockerfile and `npm start`. Options:
// --phases=throughput,cluster,memory (default all), --rounds=<n> (default 5 alternating slices per
// server), --seconds=<n> (default 8: each slice measures n/2 s), --adapter=sharded|classic (the
// baseline's Redis adapter), --hub=<script> (default dist/main.js, e.g. another build of the hub to
// compare), --versus=<script> (in place of the baseline relay, another build of the hub with the
// same settings: a before/after comparison of two builds in one run, each ratio then reads hub ÷
// that build; the targets do not apply; --versus-node-flags="…" gives it node flags of its own,
// e.g. to compare the hub under two heap settings). Needs `npm run build` first (the npm script does it). The `history` phase (run with
// --phases=history, or listed with the others) measures the hub against itself with the conversation
// log off and on, one and two replicas, and a recovery storm (docs/protocol.md). `--phases=scale` (not in
// the default set: minutes long) runs bench/scale.mjs: 50,000 clients on one replica (as many as the
// descriptor limit allows), 1,000 of them relaying, against the baseline; with --replicas=3, 50,000
// over three hub replicas and one private redis-server (Redis's load beside); it takes that file's
// options too (--clients, --active, --settle, --replicas, --rate, --kinds, --hub-node-flags).
// `--phases=streaming` (in the default set) runs bench/streaming.mjs: streamed replies, deltas per
// second, latency per delta and a resume storm; its options are --stream-concurrent, --stream-rate,
// --stream-saturation, --stream-storm. `--phases=allocation` (not in the default set) runs
// bench/allocation.mjs: bytes allocated (V8 heap and malloc) and retained per round trip by payload
// size, one and two replicas, and per streamed delta byte; its options are --alloc-sizes,
// --alloc-configs, --alloc-seconds (and --rounds, 3 there by default). `--phases=widget` (not in the
// default set) runs bench/widget.mjs: the chat widget rendering a streamed markdown answer in
// Chromium; its options are --widget-tokens (4000) and --widget-rate (deltas/s, 100).
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchHubEnv, requireHubNode } from './hub-env.mjs';
import { allocationLoad, allocationPhase, allocationTable } from './allocation.mjs';
import { allocatedBytes, cpuMs, gcOf, heapOf, idleMs, rssBytes, runProcesses, settledRss, sleep, stop } from './run-processes.mjs';
import { scalePhase } from './scale.mjs';
import { scaleRows } from './scale-rows.mjs';
import { streamingPhase, streamingTable, streamLoad } from './streaming.mjs';
import { widgetPhase, widgetTable } from './widget.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const args = Object.fromEntries(process.argv.slice(2).map((a) => a.replace(/^--/, '').split(/=(.*)/s).slice(0, 2)));
const PHASES = new Set((args.phases ?? 'throughput,memory,cluster,history,streaming').split(','));
const WINDOW_MS = Number(args.seconds ?? 8) * 1000;
const WARMUP_MS = 2000;

const SECRET = randomBytes(32).toString('hex');
const API_KEY = randomBytes(16).toString('hex');
const AGENT_IDS = Array.from({ length: 20 }, (_, i) => `bot-${i}`);
const LOAD = {
  clients: 200, // closed loop: one message in flight per client
  offeredPerS: 1000, // open loop, for the latency percentiles
  idle: 5000, // memory per idle connection
  concurrent: 10_000, // one hub replica, over two generator processes
  handshakes: 2000,
  handshakeConcurrency: 50,
  storm: 2000,
  recoveryStorm: 2000,
  recoveryMissed: 5,
};

/** Hub settings for load from one address: per-IP and per-socket limits out of the way. */
const HUB_ENV = benchHubEnv({
  JWT_SECRET: SECRET,
  AGENT_API_KEYS: API_KEY,
  MAX_CONNECTIONS: '20000',
  OPENAPI_SPEC_FILE: join(ROOT, 'bench', 'results', 'openapi.json'),
});

const log = (line) => process.stderr.write(`[bench] ${line}\n`);
const { children, startServer, startRedis, startGenerator } = runProcesses({ root: ROOT, args, hubEnv: HUB_ENV, secret: SECRET });

// ---------------------------------------------------------------------------------------------
// phases

const results = { hub: {}, baseline: {}, logOff: {}, logOn: {} };
const KINDS = ['baseline', 'hub'];
const ROUNDS = Number(args.rounds ?? 5);

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
};
const percentile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];

/**
 * Runs `measure(kind)` for both servers in alternating slices (B H, H B, B H …), so load from
 * anything else on the machine falls on both alike, and returns the slices per kind.
 */
async function alternate(measure, kinds = KINDS, rounds = ROUNDS) {
  const slices = Object.fromEntries(kinds.map((kind) => [kind, []]));
  for (let round = 0; round < rounds; round++) {
    for (const kind of round % 2 === 0 ? kinds : [...kinds].reverse()) slices[kind].push(await measure(kind));
  }
  return slices;
}

/** Connects the standard load (runtimes on `agentsOn`, clients on `clientsOn`) as group `kind`. */
async function connectLoad(gen, kind, agentsOn, clientsOn, tag) {
  await gen.call('agents', { url: agentsOn.url, agentIds: AGENT_IDS, apiKey: API_KEY, group: kind });
  const c = await gen.call('clients', {
    url: clientsOn.url,
    count: LOAD.clients,
    agentIds: AGENT_IDS,
    secret: SECRET,
    tag: `${tag}-${kind}`,
    group: kind,
  });
  if (c.connected !== LOAD.clients) throw new Error(`${kind}: only ${c.connected} clients connected (${c.firstError})`);
}

/**
 * Closed-loop throughput and open-loop latency, alternating between the two servers. `redisPid`,
 * the redis-server both sides share, has its CPU per round trip counted apart: the slices alternate,
 * so what it spends in a slice is (but for presence refreshes and canaries) that side's.
 */
async function relayMeasurements(gen, serversOf, label, kinds = KINDS, redisPid = null) {
  const cpusOf = (kind) => serversOf(kind).map((server) => cpuMs(server.pid));
  const redisCpu = () => (redisPid === null ? 0 : cpuMs(redisPid));
  const allocatedOf = async (kind) => (await Promise.all(serversOf(kind).map(allocatedBytes))).reduce((sum, n) => sum + n, 0);
  const tp = await alternate(async (kind) => {
    const [cpus0, redis0, gen0, idle0, bytes0] = [cpusOf(kind), redisCpu(), cpuMs(gen.child.pid), idleMs(), await allocatedOf(kind)];
    const r = await gen.call('closedLoop', { warmupMs: WARMUP_MS / 2, durationMs: WINDOW_MS / 2, group: kind });
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
  }, kinds);
  const lat = await alternate(
    (kind) => gen.call('openLoop', { ratePerS: LOAD.offeredPerS, warmupMs: 1000, durationMs: WINDOW_MS / 2, group: kind }),
    kinds,
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
    log(
      `${kind} ${label}: ${o.rt.toFixed(0)} round trips/s (slices ${o.rtSlices.join(', ')}; ${o.rtErrors} errors), ` +
        `${o.cpuPerRt.toFixed(3)} ms CPU${o.serverCpuPerRt.length > 1 ? ` (${o.serverCpuPerRt.map((ms) => ms.toFixed(3)).join(' + ')})` : ''}${redisPid === null ? '' : ` (and Redis ${o.redisCpuPerRt.toFixed(3)} ms)`} and ${o.kbPerRt.toFixed(1)} KB allocated each ` +
        `(the load generator ${o.genCpuPerRt.toFixed(3)} ms CPU, the machine idle ${o.idlePerRt.toFixed(3)} ms); ` +
        `at ${LOAD.offeredPerS}/s p50 ${o.p50.toFixed(2)} ms, p99 ${o.p99.toFixed(2)} ms ` +
        `(slices ${o.p99Slices.map((v) => v.toFixed(2)).join(', ')}; pooled ${o.p99Pooled.toFixed(2)}; ` +
        `${o.latSamples} samples, ${o.latErrors} errors/lost)`,
    );
  }
  return out;
}

/** One replica each: throughput, latency, then handshakes per second. */
async function throughputPhase(gen) {
  const servers = { baseline: await startServer('baseline'), hub: await startServer('hub') };
  try {
    for (const kind of KINDS) await connectLoad(gen, kind, servers[kind], servers[kind], 'tp');
    const m = await relayMeasurements(gen, (kind) => [servers[kind]], '1 replica');
    await gen.call('closeAll');
    const hs = await alternate((kind) =>
      gen.call('handshakes', {
        url: servers[kind].url,
        count: Math.ceil(LOAD.handshakes / ROUNDS),
        concurrency: LOAD.handshakeConcurrency,
        agentId: AGENT_IDS[0],
        secret: SECRET,
      }),
    );
    for (const kind of KINDS) {
      const ok = hs[kind].reduce((n, r) => n + r.ok, 0);
      const ms = hs[kind].reduce((n, r) => n + r.elapsedMs, 0);
      const failed = hs[kind].reduce((n, r) => n + r.failed, 0);
      log(`${kind} handshakes: ${((ok / ms) * 1000).toFixed(0)}/s (${ok} ok, ${failed} failed)`);
      Object.assign(results[kind], {
        rt1: m[kind].rt,
        rt1Slices: m[kind].rtSlices,
        rtErrors1: m[kind].rtErrors,
        cpuPerRt1: m[kind].cpuPerRt,
        kbPerRt1: m[kind].kbPerRt,
        p50: m[kind].p50,
        p99: m[kind].p99,
        latErrors: m[kind].latErrors,
        handshakes: (ok / ms) * 1000,
        hsFailed: failed,
      });
    }
  } finally {
    await gen.call('closeAll').catch(() => {});
    for (const server of Object.values(servers)) await stop(server.child);
  }
}

/** Fresh replica: RSS per idle connection, then 10,000 concurrent clients, then a reconnect storm. */
async function memoryPhase(kind, gen, gen2) {
  const server = await startServer(kind);
  try {
    // Load the connection code paths once, then let the heap settle before the reference reading.
    await gen.call('clients', { url: server.url, count: 50, agentIds: ['idle'], secret: SECRET, tag: 'warm' });
    await gen.call('closeAll');
    const rss0 = await settledRss(server.pid);
    const idle = await gen.call('clients', { url: server.url, count: LOAD.idle, agentIds: ['idle'], secret: SECRET, tag: 'idle' });
    const rss1 = await settledRss(server.pid);
    const perConn = (rss1.retained - rss0.retained) / idle.connected;
    const perConnAfterGc = (rss1.afterGc - rss0.afterGc) / idle.connected;
    const mib = (bytes) => (bytes / 2 ** 20).toFixed(1);
    log(
      `${kind}: ${idle.connected} idle clients, retained RSS ${mib(rss0.retained)} → ${mib(rss1.retained)} MiB, ${(perConn / 1024).toFixed(1)} KiB each; ` +
        `after a plain gc() ${mib(rss0.afterGc)} → ${mib(rss1.afterGc)} MiB, ${(perConnAfterGc / 1024).toFixed(1)} KiB each`,
    );

    const t0 = Date.now();
    const more = await gen2.call('clients', {
      url: server.url,
      count: LOAD.concurrent - idle.connected,
      agentIds: ['idle'],
      secret: SECRET,
      tag: 'idle2',
    });
    const connectSeconds = (Date.now() - t0) / 1000;
    const concurrent = idle.connected + more.connected;
    // While they are all connected: a little relay traffic must still flow.
    await gen2.call('agents', { url: server.url, agentIds: ['probe'], apiKey: API_KEY, group: 'probe' });
    const probeClients = await gen2.call('clients', {
      url: server.url,
      count: 10,
      agentIds: ['probe'],
      secret: SECRET,
      tag: 'probe',
      group: 'probe',
    });
    const probe = await gen2.call('closedLoop', { warmupMs: 500, durationMs: 3000, group: 'probe' });
    const rss2 = (await settledRss(server.pid)).afterGc;
    log(
      `${kind}: ${concurrent} concurrent clients (+${more.connected} in ${connectSeconds.toFixed(1)} s, ${more.failed} failed), ` +
        `RSS ${(rss2 / 2 ** 20).toFixed(0)} MiB, ${probe.perSecond.toFixed(0)} round trips/s alongside`,
    );
    await gen.call('closeAll');
    await gen2.call('closeAll');
    await sleep(3000); // let the server finish tearing down 10,000 sessions before the storm

    const storm = await gen.call('clients', {
      url: server.url,
      count: LOAD.storm,
      agentIds: ['storm'],
      secret: SECRET,
      tag: 'storm',
      reconnection: true,
    });
    const s = await gen.call('storm', { timeoutMs: 60_000 });
    log(`${kind}: reconnect storm, ${s.back}/${s.total} back in ${s.seconds.toFixed(2)} s (${storm.connected} connected before)`);
    Object.assign(results[kind], {
      bytesPerIdle: perConn,
      bytesPerIdleAfterGc: perConnAfterGc,
      concurrent,
      concurrentFailed: more.failed,
      concurrentProbe: probeClients.connected === 10 ? probe.perSecond : 0,
      concurrentRss: rss2,
      stormSeconds: s.back === s.total ? s.seconds : Infinity,
      stormBack: s.back,
    });
  } finally {
    await gen.call('closeAll').catch(() => {});
    await gen2.call('closeAll').catch(() => {});
    await stop(server.child);
  }
}

/**
 * Two replicas of each over one private Redis (separate key spaces: the baseline uses the adapter's
 * default prefix, the hub its own): runtimes on one replica, clients on the other, so every round
 * trip crosses Redis.
 */
async function clusterPhase(gen) {
  const redis = await startRedis();
  const servers = {};
  try {
    for (const kind of KINDS) servers[kind] = [await startServer(kind, redis.url), await startServer(kind, redis.url)];
    for (const kind of KINDS) await connectLoad(gen, kind, servers[kind][0], servers[kind][1], 'cl');
    const m = await relayMeasurements(gen, (kind) => servers[kind], '2 replicas', KINDS, redis.child.pid);
    for (const kind of KINDS) {
      Object.assign(results[kind], {
        rt2: m[kind].rt,
        rt2Slices: m[kind].rtSlices,
        rtErrors2: m[kind].rtErrors,
        cpuPerRt2: m[kind].cpuPerRt,
        redisCpuPerRt2: m[kind].redisCpuPerRt,
        kbPerRt2: m[kind].kbPerRt,
        p50c: m[kind].p50,
        p99c: m[kind].p99,
      });
    }
  } finally {
    await gen.call('closeAll').catch(() => {});
    for (const server of Object.values(servers).flat()) await stop(server.child);
    await stop(redis.child);
  }
}

/** Hub settings of the two sides of the history phase. */
const LOG_ENV = { logOff: { HISTORY_ENABLED: 'false' }, logOn: { HISTORY_ENABLED: 'true' } };
const LOG_KINDS = Object.keys(LOG_ENV);

/**
 * The conversation log's cost: the hub with HISTORY_ENABLED=false against itself with it on, under
 * the standard load, on one replica (in-memory log) and on two over Redis (Redis Streams; each side
 * on its own redis-server). Then a recovery storm on the two-replica log: clients that missed
 * replies all reconnect at once with lastMessageId.
 */
async function historyPhase(gen, gen2) {
  const one = {};
  try {
    for (const kind of LOG_KINDS) one[kind] = await startServer('hub', undefined, LOG_ENV[kind]);
    for (const kind of LOG_KINDS) await connectLoad(gen, kind, one[kind], one[kind], 'h1');
    const m = await relayMeasurements(gen, (kind) => [one[kind]], '1 replica', LOG_KINDS);
    for (const kind of LOG_KINDS)
      Object.assign(results[kind], { rt1: m[kind].rt, p50: m[kind].p50, p99: m[kind].p99, rtErrors1: m[kind].rtErrors });
  } finally {
    await gen.call('closeAll').catch(() => {});
    for (const server of Object.values(one)) await stop(server.child);
  }

  const redis = {};
  const two = {};
  try {
    for (const kind of LOG_KINDS) {
      redis[kind] = await startRedis();
      two[kind] = [await startServer('hub', redis[kind].url, LOG_ENV[kind]), await startServer('hub', redis[kind].url, LOG_ENV[kind])];
    }
    for (const kind of LOG_KINDS) await connectLoad(gen, kind, two[kind][0], two[kind][1], 'h2');
    const m = await relayMeasurements(gen, (kind) => two[kind], '2 replicas', LOG_KINDS);
    for (const kind of LOG_KINDS) {
      Object.assign(results[kind], { rt2: m[kind].rt, p50c: m[kind].p50, p99c: m[kind].p99, rtErrors2: m[kind].rtErrors });
    }
    await gen.call('closeAll');

    // Recovery storm: runtimes on replica 1, clients on replica 2, over two generator processes.
    const [agentsOn, clientsOn] = two.logOn;
    await gen.call('agents', { url: agentsOn.url, agentIds: AGENT_IDS, apiKey: API_KEY, group: 'rs' });
    const half = LOAD.recoveryStorm / 2;
    const setups = await Promise.all(
      [gen, gen2].map((g, i) =>
        g.call('recoverySetup', { url: clientsOn.url, count: half, agentIds: AGENT_IDS, secret: SECRET, tag: `rs${i}`, group: 'rs' }),
      ),
    );
    const subs = setups.map((r) => r.clients);
    // Every client sees one reply, goes away, and the bots reply `recoveryMissed` times to each.
    await gen.call('replyTo', { group: 'rs', clients: subs.flat(), times: 1 }, 300_000);
    await Promise.all([gen, gen2].map((g) => g.call('recoveryLeave', { group: 'rs' })));
    const replies = await gen.call('replyTo', { group: 'rs', clients: subs.flat(), times: LOAD.recoveryMissed }, 300_000);
    const storms = await Promise.all(
      [gen, gen2].map((g) => g.call('recoveryStorm', { group: 'rs', expect: LOAD.recoveryMissed, timeoutMs: 120_000 }, 180_000)),
    );
    const back = storms.reduce((n, r) => n + r.complete, 0);
    const seconds = Math.max(...storms.map((r) => r.seconds));
    const notRecovered = storms.reduce((n, r) => n + r.notRecovered, 0);
    const doubled = storms.reduce((n, r) => n + r.doubled, 0);
    log(
      `recovery storm: ${back}/${LOAD.recoveryStorm} clients had all ${LOAD.recoveryMissed} missed replies after ${seconds.toFixed(2)} s ` +
        `(${replies.errors} reply errors, ${notRecovered} not recovered, ${doubled} doubled)`,
    );
    Object.assign(results.logOn, {
      recoverySeconds: back === LOAD.recoveryStorm ? seconds : Infinity,
      recoveryBack: back,
      notRecovered,
      doubled,
    });
  } finally {
    await gen.call('closeAll').catch(() => {});
    await gen2.call('closeAll').catch(() => {});
    for (const server of Object.values(two).flat()) await stop(server.child);
    for (const r of Object.values(redis)) await stop(r.child);
  }
}

// ---------------------------------------------------------------------------------------------
// report

const format = (v, digits = 0) => (v === undefined ? 'n/a' : Number.isFinite(v) ? v.toFixed(digits) : '∞');

/**
 * Rows of a two-column comparison (`a` against `b`, e.g. hub against baseline): `row` writes one
 * with its cells as given, `ratioRow` one of `a[key] ÷ b[key]` judged by `test`.
 */
function comparisonRows(a, b) {
  const rows = [];
  const verdict = (ok) => (ok === undefined ? '—' : ok ? 'pass' : '**FAIL**');
  const row = (metric, x, y, r, target, ok) => rows.push(`| ${metric} | ${x} | ${y} | ${r} | ${target} | ${verdict(ok)} |`);
  const ratioRow = (metric, key, digits, target, test) => {
    const r = a[key] === undefined || b[key] === undefined || !b[key] ? undefined : a[key] / b[key];
    row(
      metric,
      format(a[key], digits),
      format(b[key], digits),
      r === undefined ? 'n/a' : r.toFixed(2),
      target,
      r === undefined || !test ? undefined : test(r),
    );
  };
  return { rows, row, ratioRow };
}

/** The latency rows every comparison has. */
function latencyRows(ratioRow) {
  ratioRow(`p50 round trip (ms) at ${LOAD.offeredPerS}/s, 1 replica`, 'p50', 2, '—');
  ratioRow(`p99 round trip (ms) at ${LOAD.offeredPerS}/s, 1 replica`, 'p99', 2, '≤ 1.25', (r) => r <= 1.25);
  ratioRow(`p50 round trip (ms) at ${LOAD.offeredPerS}/s, 2 replicas`, 'p50c', 2, '—');
  ratioRow(`p99 round trip (ms) at ${LOAD.offeredPerS}/s, 2 replicas`, 'p99c', 2, '≤ 1.25', (r) => r <= 1.25);
}

/** The conversation log's cost (docs/benchmarks.md): at most 15 % of throughput, at most 1.25× p99. */
function historyTable() {
  const on = results.logOn;
  if (on.rt1 === undefined && on.rt2 === undefined) return '';
  const { rows, ratioRow } = comparisonRows(on, results.logOff);
  ratioRow('Relay round trips/s, 1 replica (in-memory log)', 'rt1', 0, '≥ 0.85', (r) => r >= 0.85);
  ratioRow('Relay round trips/s, 2 replicas (Redis Streams log)', 'rt2', 0, '≥ 0.85', (r) => r >= 0.85);
  latencyRows(ratioRow);
  const storm =
    on.recoverySeconds === undefined
      ? []
      : [
          `| Recovery storm: s until all ${LOAD.recoveryStorm} clients reconnecting at once with lastMessageId have their ${LOAD.recoveryMissed} missed replies (2 replicas) | ${format(on.recoverySeconds, 2)} | — | — | — | ${on.recoveryBack === LOAD.recoveryStorm && on.notRecovered === 0 && on.doubled === 0 ? 'all recovered, none doubled' : `**${on.recoveryBack} back, ${on.notRecovered} not recovered, ${on.doubled} doubled**`} |`,
        ];
  return [
    '| metric (conversation log) | log on | log off | on ÷ off | target | result |',
    '|---|---|---|---|---|---|',
    ...rows,
    ...storm,
  ].join('\n');
}

/** The hub against the minimal relay; throughput targets of the hot-path issue (≥ 0.9× one replica, ≥ 1.1× two). */
function table() {
  // A scale-only run (minutes long, run by hand) reports its own rows and nothing else.
  if (PHASES.size === 1 && results.scale) {
    return [
      '| metric | hub | baseline | hub ÷ baseline | target | result |',
      '|---|---|---|---|---|---|',
      ...scaleRows(results.scale),
    ].join('\n');
  }
  const h = results.hub;
  const b = results.baseline;
  const f = format;
  const { rows, row, ratioRow } = comparisonRows(h, b);
  const ratio = (x, y) => (x === undefined || y === undefined || !y ? undefined : x / y);
  ratioRow('Relay round trips/s, 1 replica (client → agent → client)', 'rt1', 0, '≥ 0.9', (r) => r >= 0.9);
  ratioRow('Relay round trips/s, 2 replicas over Redis', 'rt2', 0, '≥ 1.1', (r) => r >= 1.1);
  latencyRows(ratioRow);
  ratioRow('Server CPU per round trip (ms), 1 replica', 'cpuPerRt1', 3, '—');
  ratioRow('Server CPU per round trip (ms), 2 replicas (sum)', 'cpuPerRt2', 3, '—');
  ratioRow("Redis CPU per round trip (ms), 2 replicas (the redis-server both share, in each side's slices)", 'redisCpuPerRt2', 3, '—');
  ratioRow('Allocated per round trip (KB on the V8 heap, collected included), 1 replica', 'kbPerRt1', 1, '—');
  ratioRow('Allocated per round trip (KB), 2 replicas (sum)', 'kbPerRt2', 1, '—');
  const kib = (v) => (v === undefined ? undefined : v / 1024);
  const mem = ratio(h.bytesPerIdle, b.bytesPerIdle);
  row(
    `Memory per idle client connection (KiB, retained RSS delta over ${LOAD.idle})`,
    f(kib(h.bytesPerIdle), 1),
    f(kib(b.bytesPerIdle), 1),
    mem === undefined ? 'n/a' : mem.toFixed(2),
    '≤ 20 KB (hub)',
    h.bytesPerIdle === undefined ? undefined : h.bytesPerIdle <= 20 * 1000,
  );
  const memGc = ratio(h.bytesPerIdleAfterGc, b.bytesPerIdleAfterGc);
  row(
    `… the same after a plain gc(), young generation grown by the connect burst included`,
    f(kib(h.bytesPerIdleAfterGc), 1),
    f(kib(b.bytesPerIdleAfterGc), 1),
    memGc === undefined ? 'n/a' : memGc.toFixed(2),
    '—',
  );
  ratioRow('Handshakes/s (both verify a JWT)', 'handshakes', 0, '—');
  ratioRow(`Reconnect storm: s until all ${LOAD.storm} dropped clients are back`, 'stormSeconds', 2, '—');
  row(
    `Concurrent clients on one replica (round trips/s alongside)`,
    h.concurrent === undefined ? 'n/a' : `${h.concurrent} (${f(h.concurrentProbe)})`,
    b.concurrent === undefined ? 'n/a' : `${b.concurrent} (${f(b.concurrentProbe)})`,
    '—',
    `${LOAD.concurrent.toLocaleString('en-US')} on 2 cores`,
    h.concurrent === undefined ? undefined : h.concurrent >= LOAD.concurrent && h.concurrentProbe > 0,
  );
  if (results.scale) rows.push(...scaleRows(results.scale));
  return ['| metric | hub | baseline | hub ÷ baseline | target | result |', '|---|---|---|---|---|---|', ...rows].join('\n');
}

async function main() {
  requireHubNode();
  const started = new Date();
  const gen = startGenerator();
  const gen2 = startGenerator();
  try {
    if (PHASES.has('throughput')) await throughputPhase(gen);
    if (PHASES.has('cluster')) await clusterPhase(gen);
    if (PHASES.has('memory')) for (const kind of KINDS) await memoryPhase(kind, gen, gen2);
    if (PHASES.has('history')) await historyPhase(gen, gen2);
    if (PHASES.has('streaming')) {
      const ctx = {
        gen,
        gen2,
        startServer,
        startRedis,
        stop,
        alternate,
        median,
        settledRss,
        cpuMs,
        log,
        agentIds: AGENT_IDS,
        apiKey: API_KEY,
        secret: SECRET,
        windowMs: WINDOW_MS,
        kinds: KINDS,
      };
      results.streaming = await streamingPhase(ctx, streamLoad(args));
    }
    if (PHASES.has('allocation')) {
      const ctx = {
        root: ROOT,
        gen,
        startServer,
        startRedis,
        stop,
        alternate,
        median,
        heapOf,
        gcOf,
        rssOf: rssBytes,
        connectLoad,
        log,
        agentIds: AGENT_IDS,
        apiKey: API_KEY,
        secret: SECRET,
        kinds: KINDS,
      };
      results.allocation = await allocationPhase(ctx, allocationLoad(args));
    }
    if (PHASES.has('scale')) results.scale = await scalePhase(args);
    if (PHASES.has('widget'))
      results.widget = await widgetPhase({ log, tokens: Number(args['widget-tokens'] ?? 4000), rate: Number(args['widget-rate'] ?? 100) });
  } finally {
    gen.child.disconnect?.();
    gen2.child.disconnect?.();
    for (const child of [...children]) await stop(child);
  }
  const command = `npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}`;
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
  const cpu = cpus();
  const report = [
    `## relay-hub bench, ${started.toISOString()}`,
    '',
    `Command: \`${command}\` (relay-hub ${pkg.version}, Node ${process.version}, ${cpu.length} × ${cpu[0]?.model.trim()}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB)`,
    '',
    ...(args.versus ? [`**The baseline column is another build of the hub, \`${args.versus}\`: the targets do not apply.**`, ''] : []),
    table(),
    '',
    historyTable(),
    '',
    results.streaming ? streamingTable(results.streaming, { comparisonRows, format }) : '',
    '',
    results.allocation ? allocationTable(results.allocation) : '',
    '',
    results.widget ? widgetTable(results.widget) : '',
    '',
    `Load: ${AGENT_IDS.length} agent runtimes and ${LOAD.clients} websocket clients per server in one generator process. Hub and ` +
      `baseline run side by side and are measured in alternating slices (${ROUNDS} each, order swapped every round) so other load on the ` +
      `machine falls on both alike; throughput and latency percentiles are the median over slices (the log shows each slice's p99 and the pooled one). Closed loop = one ` +
      `message in flight per client, ${WARMUP_MS / 2000} s warm-up then ${WINDOW_MS / 2000} s measured per slice; open loop = ${LOAD.offeredPerS} ` +
      `messages/s offered for ${WINDOW_MS / 2000} s per slice. CPU = user + system time of the server process(es) over the slice, warm-up included; allocated = bytes allocated on their V8 heaps over the same slice (GC profiler, bench/gc-signal.cjs). A round trip is client \`message\` → agent (acks, replies) → the reply reaches the client. ` +
      `Two replicas: runtimes on one, clients on the other, private redis-server, ${args.adapter ?? 'sharded'} Redis adapter for the baseline ` +
      `(the hub uses its own cluster configuration). Idle clients, the 10,000 (over two generator processes) and the storm clients are ` +
      `websocket clients of /ws/client; memory per idle client is the server's RSS growth over ${LOAD.idle} of them (the clients live in ` +
      `another process), read after V8's memory-reducing full GC in both servers; after a plain gc() the RSS also holds the young ` +
      `generation as the connect burst grew it (committed, empty, bounded, not growing with connections), shown on the next row. ` +
      `The storm drops every TCP connection at once and clients reconnect with socket.io-client's ` +
      `default backoff (1–5 s, randomized). Everything shares one machine with the generators, so absolute numbers are machine-bound; ` +
      `the ratios compare like with like.`,
    '',
  ].join('\n');
  mkdirSync(join(ROOT, 'bench', 'results'), { recursive: true });
  writeFileSync(join(ROOT, 'bench', 'results', 'latest.md'), report);
  writeFileSync(join(ROOT, 'bench', 'results', 'latest.json'), JSON.stringify({ started, command, load: LOAD, results }, null, 2));
  if (!args.versus && !args.hub && !args.phases) recordInDocs(report);
  process.stdout.write(`${report}\n`);
}

/** The report of a full run replaces the "Latest results" of docs/benchmarks.md (its heading one level down). */
function recordInDocs(report) {
  const file = join(ROOT, 'docs', 'benchmarks.md');
  const [start, end] = ['<!-- bench:latest:start -->', '<!-- bench:latest:end -->'];
  const page = readFileSync(file, 'utf8');
  const from = page.indexOf(start);
  const to = page.indexOf(end);
  if (from < 0 || to < from) return log(`${file} has no ${start} … ${end}: not recorded there`);
  const body = report.replace(/^## relay-hub bench, (.*)$/m, 'Run of $1, written by `npm run bench`.').trim();
  writeFileSync(file, `${page.slice(0, from + start.length)}\n${body}\n${page.slice(to)}`);
  log(`recorded in ${file}`);
}

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    for (const child of children) child.kill('SIGKILL');
    process.exit(130);
  });
}

main().catch(async (err) => {
  log(`failed: ${err.stack ?? err}`);
  for (const child of [...children]) await stop(child);
  process.exit(1);
});
