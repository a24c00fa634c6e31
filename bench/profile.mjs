// Where one relayed round trip's time and bytes go in a single hub replica: `npm run bench:profile`.
//
// Starts one hub (`dist/main.js`, bench settings) with bench/profiler.cjs preloaded, connects the
// bench load (agent runtimes that ack and echo, 200 websocket clients in a closed loop) from a
// generator process, profiles the measuring window (CPU profiler at 200 µs, sampling heap profiler
// that counts collected objects too), and prints:
// - CPU per round trip, and self time grouped by where the code lives (relay-hub's own layers,
//   socket.io / engine.io / ws, ioredis, pino, prom-client, TypeBox, Node internals, GC);
// - the top functions by self time;
// - bytes allocated per round trip, and the top allocating functions;
// - the hub's CPU and its read and write system calls per round trip (/proc);
// - per hub, the bytes its scavenges promoted to the old generation per round trip (what only a
//   mark-compact frees again), and the scavenges and mark-compacts that ran, with their pauses.
// Profiles are kept in bench/results/profile/ for DevTools (Performance / Memory tabs).
//
// Options: --seconds=N (window, default 8), --history=false (HISTORY_ENABLED), --top=N (rows, 15),
// --replicas=2 (two hubs over a private redis-server, runtimes on one and clients on the other; the
// tables then sum both hubs, each hub's profiles in its own folder, the last table has a row per
// hub, and Redis's CPU, system calls and commands per round trip follow, from /proc and INFO),
// --hub=<script> (default dist/main.js: another build), --payload=N (each message's text padded to N
// bytes, the reply echoing it: where a large payload's bytes are copied),
// --baseline (profile bench/baseline.mjs, the minimal relay `npm run bench` compares with, instead),
// --streams[=<n>] (streamed replies instead of round trips: n streams, default 1000, each offered
// --stream-rate deltas/s, default 3, open loop as the latency row of the streaming phase; the tables
// are then per delta, and the p50/p99 per delta of the window is printed).
import { execFileSync, fork, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generatorClient } from './generator-client.mjs';
import { benchHubEnv, HUB_NODE_FLAGS, requireHubNode } from './hub-env.mjs';
import { STREAM_HUB_ENV } from './streaming.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const { freePort } = createRequire(import.meta.url)('../deploy/cluster.cjs');
const OUT = join(ROOT, 'bench', 'results', 'profile');
const args = Object.fromEntries(process.argv.slice(2).map((a) => a.replace(/^--/, '').split('=')));
const WINDOW_MS = Number(args.seconds ?? 8) * 1000;
const TOP = Number(args.top ?? 15);
const SECRET = randomBytes(32).toString('hex');
const API_KEY = randomBytes(16).toString('hex');
const AGENT_IDS = Array.from({ length: 20 }, (_, i) => `bot-${i}`);
const CLIENTS = 200;
const BASELINE = 'baseline' in args;
const SERVER = BASELINE ? 'bench/baseline.mjs' : (args.hub ?? 'dist/main.js');
const STREAMS = 'streams' in args ? Number(args.streams || 1000) : 0;
const STREAM_RATE = Number(args['stream-rate'] ?? 3);
/** What the tables count per: a round trip, or with --streams a delta. */
const UNIT = STREAMS > 0 ? 'delta' : 'round trip';

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const lineOn = (stream, text) =>
  new Promise((resolve) => {
    let out = '';
    const onData = (chunk) => {
      out += chunk;
      if (!out.includes(text)) return;
      stream.off('data', onData);
      resolve();
    };
    stream.on('data', onData);
  });

/** Starts one hub (or the baseline relay) with the profiler preloaded; resolves once it is ready. */
async function startHub(dir, env) {
  mkdirSync(dir, { recursive: true });
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const proc = spawn(process.execPath, [...HUB_NODE_FLAGS, '--require', join(ROOT, 'bench', 'profiler.cjs'), SERVER], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
    env: {
      ...process.env,
      ...benchHubEnv({
        PORT: String(port),
        HOST: '127.0.0.1',
        JWT_SECRET: SECRET,
        AGENT_API_KEYS: API_KEY,
        OPENAPI_SPEC_FILE: join(dir, 'openapi.json'),
        ...(args.history === undefined ? {} : { HISTORY_ENABLED: args.history }),
        ...(STREAMS > 0 ? STREAM_HUB_ENV : {}),
        ...env,
      }),
      PROFILE_DIR: dir,
    },
  });
  for (let i = 0; ; i++) {
    if (
      await fetch(`${url}${BASELINE ? '/' : '/health/ready'}`).then(
        (r) => r.ok,
        () => false,
      )
    )
      break;
    if (i > 200) throw new Error('hub did not become ready');
    await sleep(100);
  }
  return { proc, url, dir };
}

/** A private redis-server on a free port (never the machine's 6379). */
async function startRedis() {
  const port = await freePort();
  const proc = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await lineOn(proc.stdout, 'Ready to accept connections');
  return { proc, port, url: `redis://127.0.0.1:${port}` };
}

/**
 * Redis's CPU seconds, and calls and µs spent per command (INFO cpu and commandstats), to diff over
 * the window. A script's µs include those of the commands it calls.
 */
function redisCounters(port, pid) {
  const text = execFileSync('redis-cli', ['-p', String(port), 'INFO', 'everything'], { encoding: 'utf8' });
  const field = (name) => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(text)[1]);
  const stats = new Map(
    [...text.matchAll(/^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/gm)].map((m) => [m[1], { calls: Number(m[2]), us: Number(m[3]) }]),
  );
  return { cpuS: field('used_cpu_sys') + field('used_cpu_user'), ...readSyscalls(pid), stats };
}

/** Redis's share of the window: CPU and commands per round trip. */
function reportRedis(before, after, roundTrips) {
  const cpuUs = ((after.cpuS - before.cpuS) * 1e6) / roundTrips;
  const rows = [...after.stats]
    .map(([cmd, { calls, us }]) => {
      const was = before.stats.get(cmd) ?? { calls: 0, us: 0 };
      return [cmd, (calls - was.calls) / roundTrips, (us - was.us) / roundTrips];
    })
    .filter(([, n]) => n >= 0.01)
    .sort((a, b) => b[1] - a[1]);
  const total = rows.reduce((sum, [, n]) => sum + n, 0);
  const per = (was, is) => ((is - was) / roundTrips).toFixed(2);
  console.log(`
Redis: ${cpuUs.toFixed(1)} µs CPU, ${total.toFixed(2)} commands (calls made by scripts included), ${per(before.reads, after.reads)} read and \
${per(before.writes, after.writes)} write system calls per ${UNIT}
`);
  console.log(`| Redis command | calls per ${UNIT} | µs per ${UNIT} (commandstats) |\n|---|---|---|`);
  for (const [cmd, n, us] of rows) console.log(`| ${cmd} | ${n.toFixed(2)} | ${us.toFixed(1)} |`);
}

async function main() {
  requireHubNode();
  mkdirSync(OUT, { recursive: true });
  const replicas = Number(args.replicas ?? 1);
  const redis = replicas > 1 ? await startRedis() : undefined;
  const hubs = [];
  const gen = fork(join(ROOT, 'bench', 'generator.mjs'), { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  try {
    for (let i = 0; i < replicas; i++) {
      hubs.push(await startHub(replicas > 1 ? join(OUT, `hub-${i + 1}`) : OUT, redis ? { REDIS_URL: redis.url } : {}));
    }
    const { call } = generatorClient(gen);
    await call('agents', { url: hubs[0].url, agentIds: AGENT_IDS, apiKey: API_KEY });
    const clientsOn = hubs[hubs.length - 1].url;
    if (STREAMS > 0) {
      await call('streamClients', { url: clientsOn, count: STREAMS, agentIds: AGENT_IDS, secret: SECRET, tag: 'profile' });
      await call('streamOpen', {});
    } else await call('clients', { url: clientsOn, count: CLIENTS, agentIds: AGENT_IDS, secret: SECRET, tag: 'profile' });

    const countersOf = () => hubs.map((hub) => ({ cpuMs: readCpuMs(hub.proc.pid), ...readSyscalls(hub.proc.pid) }));
    const running =
      STREAMS > 0
        ? call('streamOpenLoop', { ratePerStream: STREAM_RATE, warmupMs: 2000, durationMs: WINDOW_MS }, WINDOW_MS + 30_000).then((r) => {
            console.log(
              `\n${STREAMS} streams × ${STREAM_RATE} deltas/s offered: p50 ${r.p50.toFixed(2)} ms, p99 ${r.p99.toFixed(2)} ms, max ${r.max?.toFixed(2)} ms per delta (${r.lost} lost)`,
            );
            return { completed: r.samples, perSecond: r.samples / (WINDOW_MS / 1000), errors: r.lost };
          })
        : call('closedLoop', { warmupMs: 2000, durationMs: WINDOW_MS, payloadBytes: Number(args.payload ?? 0) });
    await sleep(2000);
    const hubs0 = countersOf();
    const redis0 = redis && redisCounters(redis.port, redis.proc.pid);
    await Promise.all(
      hubs.map((hub) => {
        const started = lineOn(hub.proc.stdout, 'profiling');
        hub.proc.kill('SIGUSR1');
        return started;
      }),
    );
    const result = await running;
    await Promise.all(
      hubs.map((hub) => {
        const written = lineOn(hub.proc.stdout, 'profiled');
        hub.proc.kill('SIGUSR2');
        return written;
      }),
    );
    const hubs1 = countersOf();
    const cpuMs = hubs1.reduce((sum, hub, i) => sum + hub.cpuMs - hubs0[i].cpuMs, 0);
    const redis1 = redis && redisCounters(redis.port, redis.proc.pid);
    const roundTrips = report(
      result,
      cpuMs,
      hubs.map((hub) => hub.dir),
    );
    reportHubs(hubs0, hubs1, roundTrips);
    reportGc(
      hubs.map((hub) => hub.dir),
      roundTrips,
    );
    if (redis) reportRedis(redis0, redis1, roundTrips);
  } finally {
    gen.kill('SIGKILL');
    for (const hub of hubs) hub.proc.kill('SIGKILL');
    redis?.proc.kill('SIGKILL');
  }
}

/** Read and write system calls so far (/proc/<pid>/io). */
function readSyscalls(pid) {
  const io = readFileSync(`/proc/${pid}/io`, 'utf8');
  const count = (name) => Number(new RegExp(`^${name}: (\\d+)`, 'm').exec(io)[1]);
  return { reads: count('syscr'), writes: count('syscw') };
}

/** A hub's row label: its number, and on two replicas its role (the runtimes' hub starts first). */
function hubLabel(i, hubs) {
  const role = hubs === 1 ? '' : i === 0 ? ' (runtimes)' : i === hubs - 1 ? ' (clients)' : '';
  return `${i + 1}${role}`;
}

/** Each hub's CPU and system calls per round trip: on two replicas the runtimes' one first, then the clients'. */
function reportHubs(before, after, roundTrips) {
  console.log(`\n| hub | CPU µs per ${UNIT} | reads per ${UNIT} | writes per ${UNIT} |\n|---|---|---|---|`);
  after.forEach((is, i) => {
    const per = (field) => (is[field] - before[i][field]) / roundTrips;
    console.log(
      `| ${hubLabel(i, after.length)} | ${(per('cpuMs') * 1000).toFixed(1)} | ${per('reads').toFixed(2)} | ${per('writes').toFixed(2)} |`,
    );
  });
}

/**
 * Each hub's collections over the window (bench/profiler.cjs's gc.json): what scavenges promoted
 * to the old generation per round trip (the old generation's growth across them: objects that
 * outlived two scavenges, which only a mark-compact frees), and how many scavenges and
 * mark-compacts ran, with their pauses.
 */
function reportGc(dirs, roundTrips) {
  const oldSpaces = new Set(['old_space', 'large_object_space', 'code_space', 'trusted_space', 'trusted_large_object_space']);
  const oldBytes = (side) => side.heapSpaceStatistics.reduce((sum, s) => sum + (oldSpaces.has(s.spaceName) ? s.spaceUsedSize : 0), 0);
  console.log(
    `\n| hub | promoted by scavenges, bytes per ${UNIT} | scavenges (pause ms, median / max) | mark-compacts (pause ms, sum) |\n|---|---|---|---|`,
  );
  dirs.forEach((dir, i) => {
    const { statistics } = JSON.parse(readFileSync(join(dir, 'gc.json'), 'utf8'));
    const scavenges = statistics.filter((gc) => gc.gcType === 'Scavenge');
    const majors = statistics.filter((gc) => gc.gcType === 'MarkSweepCompact');
    const promoted = scavenges.reduce((sum, gc) => sum + Math.max(0, oldBytes(gc.afterGC) - oldBytes(gc.beforeGC)), 0);
    const pauses = scavenges.map((gc) => gc.cost / 1000).sort((a, b) => a - b);
    const median = pauses.length === 0 ? 0 : pauses[Math.floor(pauses.length / 2)];
    const majorMs = majors.reduce((sum, gc) => sum + gc.cost / 1000, 0);
    console.log(
      `| ${hubLabel(i, dirs.length)} | ${(promoted / roundTrips).toFixed(0)} | ${scavenges.length} (${median.toFixed(2)} / ${(pauses.at(-1) ?? 0).toFixed(2)}) | ${majors.length} (${majorMs.toFixed(1)}) |`,
    );
  });
}

function readCpuMs(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

/** Where code lives, for grouping: relay-hub's layers by folder, libraries by package. */
function placeOf(url, name) {
  if (name === '(garbage collector)') return 'GC';
  if (name === '(program)' || name === '(idle)') return name;
  const own = /\/dist\/([^/]+)\//.exec(url);
  if (own && !url.includes('node_modules')) return `relay-hub ${own[1]}/`;
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (pkg) return pkg[1];
  if (url.startsWith('node:') || url === '') return 'node internals';
  return url;
}

/** Prints the tables over the profiles in `dirs` (one per hub, summed). */
function report(result, cpuMs, dirs) {
  const roundTrips = result.completed ?? Math.round(result.perSecond * (WINDOW_MS / 1000));
  const byPlace = new Map();
  const byFunction = new Map();
  let totalUs = 0;
  for (const dir of dirs) {
    const cpu = JSON.parse(readFileSync(join(dir, 'cpu.cpuprofile'), 'utf8'));
    const dt = new Map();
    cpu.samples.forEach((id, i) => dt.set(id, (dt.get(id) ?? 0) + (cpu.timeDeltas[i] ?? 0)));
    const nodes = new Map(cpu.nodes.map((n) => [n.id, n]));
    for (const [id, us] of dt) {
      const { callFrame } = nodes.get(id);
      const place = placeOf(callFrame.url, callFrame.functionName);
      if (place === '(idle)') continue;
      totalUs += us;
      byPlace.set(place, (byPlace.get(place) ?? 0) + us);
      const fn = `${callFrame.functionName || '(anonymous)'} ${place === 'GC' || place === '(program)' ? '' : `${callFrame.url.split('/').slice(-2).join('/')}:${callFrame.lineNumber + 1}`}`;
      byFunction.set(fn, (byFunction.get(fn) ?? 0) + us);
    }
  }
  const perRt = (us) => (us / roundTrips).toFixed(1);
  console.log(
    `\n${roundTrips} ${UNIT}s in ${WINDOW_MS / 1000} s (${result.perSecond.toFixed(0)}/s, ${result.errors} errors${result.firstError ? `, the first ${result.firstError}` : ''})`,
  );
  console.log(
    `hub CPU ${((cpuMs / roundTrips) * 1000).toFixed(1)} µs per ${UNIT} (process time${dirs.length > 1 ? `, ${dirs.length} hubs summed` : ''}); profiled busy time ${perRt(totalUs)} µs\n`,
  );
  console.log(`| where | µs per ${UNIT} | share |\n|---|---|---|`);
  for (const [place, us] of [...byPlace].sort((a, b) => b[1] - a[1]).slice(0, TOP)) {
    console.log(`| ${place} | ${perRt(us)} | ${((us / totalUs) * 100).toFixed(1)} % |`);
  }
  console.log(`\n| function (self time) | µs per ${UNIT} | share |\n|---|---|---|`);
  for (const [fn, us] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, TOP)) {
    console.log(`| \`${fn.trim()}\` | ${perRt(us)} | ${((us / totalUs) * 100).toFixed(1)} % |`);
  }

  const allocs = new Map();
  let totalBytes = 0;
  const walk = (node) => {
    const bytes = node.selfSize;
    if (bytes > 0) {
      const { callFrame } = node;
      const key = `${callFrame.functionName || '(anonymous)'} ${callFrame.url.split('/').slice(-2).join('/')}:${callFrame.lineNumber + 1}`;
      allocs.set(key, (allocs.get(key) ?? 0) + bytes);
      totalBytes += bytes;
    }
    for (const child of node.children ?? []) walk(child);
  };
  for (const dir of dirs) walk(JSON.parse(readFileSync(join(dir, 'alloc.heapprofile'), 'utf8')).head);
  console.log(
    `\nallocated ≈ ${(totalBytes / roundTrips).toFixed(0)} bytes per ${UNIT} (sampled every 4 KiB, collected objects included)\n`,
  );
  console.log(`| function (allocations) | bytes per ${UNIT} |\n|---|---|`);
  for (const [fn, bytes] of [...allocs].sort((a, b) => b[1] - a[1]).slice(0, TOP)) {
    console.log(`| \`${fn.trim()}\` | ${(bytes / roundTrips).toFixed(0)} |`);
  }
  console.log(`\nprofiles: ${dirs.map((dir) => `${dir}/cpu.cpuprofile, ${dir}/alloc.heapprofile`).join('; ')}`);
  return roundTrips;
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
