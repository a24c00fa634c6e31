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
//
// This file reads the options, runs the phases and writes the report. Its parts: run-processes.mjs
// (the servers, generators and redis-servers, and readings of them), relay-measurements.mjs (how two
// servers' relay is compared), relay-phases.mjs (throughput, cluster, memory), history.mjs, and
// report.mjs (the tables, the notes, docs/benchmarks.md).
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchHubEnv, requireHubNode } from './hub-env.mjs';
import { allocationLoad, allocationPhase } from './allocation.mjs';
import { historyPhase } from './history.mjs';
import { alternate, connectLoad, median } from './relay-measurements.mjs';
import { clusterPhase, memoryPhase, throughputPhase } from './relay-phases.mjs';
import { benchReport, recordInDocs } from './report.mjs';
import { cpuMs, rssBytes, stop } from './proc.mjs';
import { gcOf, heapOf, runProcesses, settledRss } from './run-processes.mjs';
import { scalePhase } from './scale.mjs';
import { streamingPhase, streamLoad } from './streaming.mjs';
import { widgetPhase } from './widget.mjs';

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

const KINDS = ['baseline', 'hub'];
const ROUNDS = Number(args.rounds ?? 5);

const log = (line) => process.stderr.write(`[bench] ${line}\n`);
const { children, startServer, startRedis, startGenerator } = runProcesses({ root: ROOT, args, hubEnv: HUB_ENV, secret: SECRET });

async function main() {
  requireHubNode();
  const started = new Date();
  const gen = startGenerator();
  const gen2 = startGenerator();
  /**
   * The toolbox every phase takes: the run's settings, its servers and generators, where the figures
   * go, and the measuring helpers (streaming.mjs and allocation.mjs call them from here).
   */
  const ctx = {
    root: ROOT,
    gen,
    gen2,
    log,
    results: { hub: {}, baseline: {}, logOff: {}, logOn: {} },
    load: LOAD,
    agentIds: AGENT_IDS,
    apiKey: API_KEY,
    secret: SECRET,
    warmupMs: WARMUP_MS,
    windowMs: WINDOW_MS,
    kinds: KINDS,
    rounds: ROUNDS,
    startServer,
    startRedis,
    stop,
    alternate: (measure, kinds = KINDS, rounds = ROUNDS) => alternate(measure, kinds, rounds),
    median,
    connectLoad: (g, kind, agentsOn, clientsOn, tag) => connectLoad(ctx, g, kind, agentsOn, clientsOn, tag),
    settledRss,
    cpuMs,
    heapOf,
    gcOf,
    rssOf: rssBytes,
  };
  const { results } = ctx;
  try {
    if (PHASES.has('throughput')) await throughputPhase(ctx);
    if (PHASES.has('cluster')) await clusterPhase(ctx);
    if (PHASES.has('memory')) for (const kind of KINDS) await memoryPhase(ctx, kind);
    if (PHASES.has('history')) await historyPhase(ctx);
    if (PHASES.has('streaming')) results.streaming = await streamingPhase(ctx, streamLoad(args));
    if (PHASES.has('allocation')) results.allocation = await allocationPhase(ctx, allocationLoad(args));
    if (PHASES.has('scale')) results.scale = await scalePhase(args);
    if (PHASES.has('widget'))
      results.widget = await widgetPhase({ log, tokens: Number(args['widget-tokens'] ?? 4000), rate: Number(args['widget-rate'] ?? 100) });
  } finally {
    gen.child.disconnect?.();
    gen2.child.disconnect?.();
    for (const child of [...children]) await stop(child);
  }
  const command = `npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}`;
  const report = benchReport(ctx, { started, command, args, phases: PHASES });
  mkdirSync(join(ROOT, 'bench', 'results'), { recursive: true });
  writeFileSync(join(ROOT, 'bench', 'results', 'latest.md'), report);
  writeFileSync(join(ROOT, 'bench', 'results', 'latest.json'), JSON.stringify({ started, command, load: LOAD, results }, null, 2));
  if (!args.versus && !args.hub && !args.phases) recordInDocs(ctx, report);
  process.stdout.write(`${report}\n`);
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
