// Scale up: many idle authenticated clients on ONE server process while 1,000 of them relay, the
// hub against the baseline relay (bench/baseline.mjs), each measured alone on a fresh process; or,
// with --replicas=<n> (n > 1), the clients spread over n hub replicas on this machine over one
// private redis-server, which is how 50,000 clients fit under a per-process descriptor limit of
// 20,000: connect time, RSS per client per replica, Redis's load (commands/s, memory, CPU) and round
// trips (throughput, p50/p99) of the active clients among the idle ones.
// `npm run bench -- --phases=scale` runs it from bench/run.mjs; `npm run build && node bench/scale.mjs`
// (Node 24 first on PATH, as npm puts it) alone too.
//
// Options: --clients=<n> (default 50000, idle + active), --active=<n> (default 1000), --settle=<s>
// (default 20: RSS is read this long after the connect burst, without any forced GC, as a
// container limit sees it), --relay-seconds=<n> (default 10), --kinds=baseline,hub,
// --hub-node-flags="…" (node flags for the hub process only; default those of deploy/Dockerfile,
// `--max-semi-space-size=16 --no-allocation-site-pretenuring`; the baseline runs with Node's defaults),
// --replicas=<n> (default 1; above 1 the hub only, unless --kinds names the baseline too: the
// baseline relay then runs n replicas over its own redis-server with the sharded adapter),
// --rate=<n> (default 1000: messages/s offered over all active clients for the latency percentiles),
// --per-generator=<n> (default 12,500 clients per generator process), --window=<n> (several replicas:
// handshakes in flight per generator, default 64; each client waits up to 60 s for its connect).
//
// Loopback only. One source address has ~28,000 ephemeral ports (32768–60999), so clients are
// spread round robin over 127.0.0.2 … (one address per 10,000 clients; a different set for each
// server, so sockets left in TIME_WAIT by the first run cannot starve the second). Generators are
// separate processes (one per 12,500 clients, fewer if the descriptor limit is lower). The servers
// and the generators raise their descriptor limit to 200,000 where the hard limit may be raised (root
// with CAP_SYS_RESOURCE), else run under the hard limit as it is (20,000 on the development machine:
// one replica then takes 19,800 clients, three take 50,000). Bounded: every step has a timeout, the
// phase gives up after 15 minutes (30 with several replicas), and every process it started (servers,
// generators, redis-server) is killed at the end of each measurement, on failure too.
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generatorClient } from './generator-client.mjs';
import { benchHubEnv, HUB_NODE_FLAGS, requireHubNode } from './hub-env.mjs';

const { freePort } = createRequire(import.meta.url)('../deploy/cluster.cjs');

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const NOFILE = 200_000;
const PER_ADDRESS = 10_000;
const PER_GENERATOR = 12_500;
const PHASE_LIMIT_MS = 15 * 60_000;
const REPLICAS_PHASE_LIMIT_MS = 30 * 60_000;
/** A generator's longest call (a connect burst of its share under a loaded machine). */
const CALL_TIMEOUT_MS = 15 * 60_000;

const log = (line) => process.stderr.write(`[scale] ${line}\n`);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const mib = (bytes) => (bytes / 2 ** 20).toFixed(1);

export function rssBytes(pid) {
  return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) * 1024;
}

/** User + system CPU seconds of a process. */
function cpuSeconds(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** Every {@link Processes} not stopped yet: killed when this process exits, however it exits. */
const live = new Set();
process.on('exit', () => {
  for (const procs of live) for (const child of procs.children) child.kill('SIGKILL');
});

/** The child processes of one measurement, all killed at its end (or when this process exits). */
export class Processes {
  children = new Set();

  constructor(nofile) {
    this.nofile = nofile;
    live.add(this);
  }

  /** `node [flags] script` with the file-descriptor limit raised (as root) for 50,000 sockets. */
  spawn(script, env, { ipc = false, nodeFlags = [] } = {}) {
    const sh = `ulimit -Hn ${this.nofile} && ulimit -n ${this.nofile} && exec "$0" "$@"`;
    const child = spawn('sh', ['-c', sh, process.execPath, ...nodeFlags, script], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe', ...(ipc ? ['ipc'] : [])],
    });
    this.children.add(child);
    child.once('exit', () => this.children.delete(child));
    // The servers log at warn (hub) or not at all (baseline): whatever they say goes to the log.
    child.stdout.on('data', (chunk) => process.stderr.write(`[${script.split('/').pop()} ${child.pid}] ${chunk}`));
    child.stderr.on('data', (chunk) => process.stderr.write(`[${script.split('/').pop()} ${child.pid}] ${chunk}`));
    return child;
  }

  async stop(child) {
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const gone = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await gone;
  }

  /** Last started first: generators, then servers, then Redis, so no server logs its Redis vanishing. */
  async stopAll() {
    for (const child of [...this.children].reverse()) await this.stop(child);
    live.delete(this);
  }
}

export function generator(procs) {
  const child = procs.spawn('bench/generator.mjs', {}, { ipc: true, nodeFlags: ['--max-old-space-size=4096'] });
  return generatorClient(child, CALL_TIMEOUT_MS);
}

/** A private redis-server on a free port (never 6379), no persistence; killed with the others. */
async function startRedis(procs) {
  const port = await freePort();
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  procs.children.add(child);
  child.once('exit', () => procs.children.delete(child));
  child.stderr.resume();
  await new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error('redis-server did not start within 10 s')), 10_000);
    child.stdout.on('data', (chunk) => {
      out += chunk;
      if (out.includes('Ready to accept connections')) {
        clearTimeout(timer);
        child.stdout.resume();
        resolve();
      }
    });
    child.once('exit', (code) => reject(new Error(`redis-server exited (${code})`)));
  });
  return { url: `redis://127.0.0.1:${port}`, port, child, pid: child.pid };
}

/** Redis's INFO fields (all sections) as strings; `redis-cli` with a 10 s bound. */
function redisInfo(port) {
  const out = spawnSync('redis-cli', ['-h', '127.0.0.1', '-p', String(port), 'INFO', 'all'], { encoding: 'utf8', timeout: 10_000 });
  if (out.status !== 0) throw new Error(`redis-cli INFO failed: ${out.stderr || out.error}`);
  return Object.fromEntries(
    out.stdout
      .split(/\r?\n/)
      .filter((line) => line.includes(':') && !line.startsWith('#'))
      .map((line) => line.split(/:(.*)/s).slice(0, 2)),
  );
}

/** A point of Redis's counters: commands processed, memory, and redis-server's CPU seconds. */
function redisMark(redis) {
  const info = redisInfo(redis.port);
  return {
    at: Date.now(),
    commands: Number(info.total_commands_processed),
    usedMemory: Number(info.used_memory),
    rss: Number(info.used_memory_rss),
    clients: Number(info.connected_clients),
    cpu: cpuSeconds(redis.pid),
  };
}

/** Redis's load between two marks: commands/s and CPU (% of one core). */
function redisLoad(from, to) {
  const seconds = (to.at - from.at) / 1000;
  return { seconds, opsPerS: (to.commands - from.commands) / seconds, cpuPercent: ((to.cpu - from.cpu) / seconds) * 100 };
}

/** `total` split into `parts` near-equal shares; share `i`. */
const share = (total, parts, i) => Math.floor(total / parts) + (i < total % parts ? 1 : 0);

const percentile = (sorted, q) => (sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]);

/** Fresh secrets, the bots' ids and the hub's bench settings: what every server of a measurement shares. */
export function scaleEnv(hubScript) {
  const secret = randomBytes(32).toString('hex');
  const apiKey = randomBytes(16).toString('hex');
  return {
    secret,
    apiKey,
    agentIds: Array.from({ length: 20 }, (_, i) => `bot-${i}`),
    idleAgentIds: Array.from({ length: 100 }, (_, i) => `idle-${i}`),
    hubScript,
    hub: benchHubEnv({
      JWT_SECRET: secret,
      AGENT_API_KEYS: apiKey,
      MAX_CONNECTIONS: '0',
      OPENAPI_SPEC_FILE: join(ROOT, 'bench', 'results', 'openapi.json'),
    }),
  };
}

export async function startServer(procs, kind, env, nodeFlags, redisUrl = undefined) {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const common = { PORT: String(port), HOST: '127.0.0.1', ...(redisUrl ? { REDIS_URL: redisUrl } : {}) };
  const flags = ['--expose-gc', '--require', join(ROOT, 'bench', 'gc-signal.cjs'), ...nodeFlags];
  const child =
    kind === 'hub'
      ? procs.spawn(env.hubScript, { ...env.hub, ...common }, { nodeFlags: flags })
      : procs.spawn('bench/baseline.mjs', { ...common, JWT_SECRET: env.secret, ADAPTER: 'sharded' }, { nodeFlags: flags });
  const exited = new Promise((_, reject) => child.once('exit', (code) => reject(new Error(`${kind} exited early (${code})`))));
  exited.catch(() => {});
  const ready = kind === 'hub' ? `${url}/health/ready` : url;
  const deadline = Date.now() + 60_000;
  const up = (async () => {
    for (;;) {
      if (
        await fetch(ready).then(
          (r) => r.ok,
          () => false,
        )
      )
        return;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${kind} on ${url}`);
      await sleep(100);
    }
  })();
  await Promise.race([up, exited]);
  return { kind, url, child, pid: child.pid, exited };
}

/**
 * One server, fresh: connect burst; RSS of the idle clients without GC, then after gc() and after
 * the memory-reducing GC; then relay for the active clients (all others still connected).
 */
async function measureOne(kind, opts, env, addressBase) {
  const procs = new Processes(opts.nofile);
  const nodeFlags = kind === 'hub' ? opts.hubNodeFlags : [];
  const server = await startServer(procs, kind, env, nodeFlags);
  const gens = Array.from({ length: Math.max(1, Math.ceil(opts.clients / opts.perGenerator)) }, () => generator(procs));
  const addresses = Array.from({ length: Math.ceil(opts.clients / PER_ADDRESS) }, (_, i) => `127.0.0.${addressBase + i}`);
  try {
    // Load the connection code paths once, then a reference reading with no forced GC.
    await gens[0].call('clients', { url: server.url, count: 50, agentIds: ['warm'], secret: env.secret, tag: 'warm' });
    await gens[0].call('closeAll');
    await sleep(3000);
    const rss0 = rssBytes(server.pid);

    await gens[0].call('agents', { url: server.url, agentIds: env.agentIds, apiKey: env.apiKey, group: 'active' });
    const idleCount = opts.clients - opts.active;
    const cpu0 = cpuSeconds(server.pid);
    const t0 = Date.now();
    const burst = await Promise.all(
      gens.map(async (gen, i) => {
        const localAddresses = addresses; // round robin in every generator: each address gets an even share
        const active = await gen.call('clients', {
          url: server.url,
          count: share(opts.active, gens.length, i),
          agentIds: env.agentIds,
          secret: env.secret,
          tag: `active${i}`,
          group: 'active',
          localAddresses,
        });
        const idle = await gen.call('clients', {
          url: server.url,
          count: share(idleCount, gens.length, i),
          agentIds: env.idleAgentIds,
          secret: env.secret,
          tag: `idle${i}`,
          group: 'idle',
          localAddresses,
        });
        return { active, idle };
      }),
    );
    const connectSeconds = (Date.now() - t0) / 1000;
    const connectCpu = cpuSeconds(server.pid) - cpu0;
    const connected = burst.reduce((n, r) => n + r.active.connected + r.idle.connected, 0);
    const activeConnected = burst.reduce((n, r) => n + r.active.connected, 0);
    const failed = burst.reduce((n, r) => n + r.active.failed + r.idle.failed, 0);
    const firstError = burst.map((r) => r.idle.firstError ?? r.active.firstError).find(Boolean);
    log(
      `${kind}: ${connected} clients connected in ${connectSeconds.toFixed(1)} s (${failed} failed${firstError ? `: ${firstError}` : ''}), ` +
        `${connectCpu.toFixed(1)} s server CPU, ${(connected / connectSeconds).toFixed(0)}/s`,
    );

    await sleep(opts.settleS * 1000);
    const rssIdle = rssBytes(server.pid);
    process.kill(server.pid, 'SIGWINCH'); // heap spaces [committed, used] MiB on stderr (gc-signal.cjs)
    log(`${kind}: RSS ${opts.settleS} s after the burst, no forced GC: ${mib(rss0)} → ${mib(rssIdle)} MiB`);

    process.kill(server.pid, 'SIGUSR2');
    await sleep(2000);
    const rssGc = rssBytes(server.pid);
    process.kill(server.pid, 'SIGURG');
    await sleep(2000);
    const rssRetained = rssBytes(server.pid);
    process.kill(server.pid, 'SIGWINCH');
    const loops = await Promise.all(
      gens.map((gen) => gen.call('closedLoop', { warmupMs: 2000, durationMs: opts.relaySeconds * 1000, group: 'active' })),
    );
    const perSecond = loops.reduce((n, r) => n + r.perSecond, 0);
    const rtErrors = loops.reduce((n, r) => n + r.errors, 0);
    const rssRelaying = rssBytes(server.pid);
    log(
      `${kind}: ${activeConnected} active clients, ${perSecond.toFixed(0)} round trips/s (${rtErrors} errors), RSS ${mib(rssRelaying)} MiB`,
    );

    const still = (await Promise.all(gens.map((g) => g.call('count', {})))).reduce((n, c) => n + c.connected, 0);
    const per = (rss) => (rss - rss0) / connected;
    const r = {
      connected,
      failed,
      stillConnected: still,
      connectSeconds,
      connectCpu,
      rss0,
      rssIdle,
      rssGc,
      rssRetained,
      perIdle: per(rssIdle),
      perGc: per(rssGc),
      perRetained: per(rssRetained),
      activeConnected,
      perSecond,
      rtErrors,
      rssRelaying,
    };
    log(
      `${kind}: per client ${(r.perIdle / 1000).toFixed(1)} KB idle without GC, ${(r.perGc / 1000).toFixed(1)} KB after gc(), ` +
        `${(r.perRetained / 1000).toFixed(1)} KB after the memory-reducing GC; ${still}/${connected} still connected`,
    );
    return r;
  } finally {
    for (const gen of gens) gen.child.disconnect?.();
    await procs.stopAll();
  }
}

/**
 * Several replicas of one kind over one private redis-server, fresh: the bots on the first
 * replica, the clients (active and idle) spread evenly over all, so two thirds of the round trips
 * cross Redis. Connect burst from every generator at once; RSS of each replica before connecting
 * and with its idle clients, without forced GC, then after gc() and after the memory-reducing GC;
 * Redis's commands/s, memory and CPU over the burst, the idle settle and the relay; then closed-loop
 * round trips of the active clients (throughput) and an open loop at `rate`/s (p50/p99).
 */
async function measureReplicas(kind, opts, env, addressBase) {
  const procs = new Processes(opts.nofile);
  try {
    const redis = await startRedis(procs);
    const nodeFlags = kind === 'hub' ? opts.hubNodeFlags : [];
    const servers = [];
    for (let r = 0; r < opts.replicas; r++) servers.push(await startServer(procs, kind, env, nodeFlags, redis.url));
    const gens = Array.from({ length: Math.ceil(opts.clients / opts.perGenerator) }, () => generator(procs));
    const addresses = Array.from({ length: Math.ceil(opts.clients / PER_ADDRESS) }, (_, i) => `127.0.0.${addressBase + i}`);

    // Load the connection code paths of every replica once, then the reference readings, no forced GC.
    for (const server of servers) {
      await gens[0].call('clients', { url: server.url, count: 50, agentIds: ['warm'], secret: env.secret, tag: `warm${server.pid}` });
    }
    await gens[0].call('closeAll');
    await sleep(3000);
    const rss0 = servers.map((server) => rssBytes(server.pid));
    const redis0 = redisMark(redis);

    await gens[0].call('agents', { url: servers[0].url, agentIds: env.agentIds, apiKey: env.apiKey, group: 'active' });
    const idleCount = opts.clients - opts.active;
    const cpu0 = servers.map((server) => cpuSeconds(server.pid));
    const t0 = Date.now();
    // Every generator connects its share to every replica, active clients first, replicas in a
    // different order per generator so that the replicas fill alike.
    const burst = await Promise.all(
      gens.map(async (gen, g) => {
        const perReplica = servers.map(() => ({ active: 0, idle: 0, failed: 0, firstError: undefined }));
        for (const group of ['active', 'idle']) {
          for (let k = 0; k < servers.length; k++) {
            const r = (g + k) % servers.length;
            const total = group === 'active' ? opts.active : idleCount;
            const count = share(share(total, gens.length, g), servers.length, r);
            if (count === 0) continue;
            const res = await gen.call('clients', {
              url: servers[r].url,
              count,
              agentIds: group === 'active' ? env.agentIds : env.idleAgentIds,
              secret: env.secret,
              tag: `${group}${g}r${r}`,
              group,
              localAddresses: addresses,
              window: opts.window,
              timeoutMs: 60_000,
            });
            perReplica[r][group] += res.connected;
            perReplica[r].failed += res.failed;
            perReplica[r].firstError ??= res.firstError;
          }
        }
        return perReplica;
      }),
    );
    const connectSeconds = (Date.now() - t0) / 1000;
    const redisConnected = redisMark(redis);
    const connectCpu = servers.map((server, r) => cpuSeconds(server.pid) - cpu0[r]);
    const replicas = servers.map((server, r) => ({
      pid: server.pid,
      connected: burst.reduce((n, b) => n + b[r].active + b[r].idle, 0),
      active: burst.reduce((n, b) => n + b[r].active, 0),
      failed: burst.reduce((n, b) => n + b[r].failed, 0),
      rss0: rss0[r],
      connectCpu: connectCpu[r],
    }));
    const connected = replicas.reduce((n, r) => n + r.connected, 0);
    const activeConnected = replicas.reduce((n, r) => n + r.active, 0);
    const failed = replicas.reduce((n, r) => n + r.failed, 0);
    const firstError = burst.flat().find((b) => b.firstError)?.firstError;
    log(
      `${kind} × ${servers.length}: ${connected} clients connected in ${connectSeconds.toFixed(1)} s (${failed} failed${firstError ? `: ${firstError}` : ''}), ` +
        `${(connected / connectSeconds).toFixed(0)}/s; per replica ${replicas.map((r) => r.connected).join(' / ')}`,
    );

    await sleep(opts.settleS * 1000);
    const redisSettled = redisMark(redis);
    for (const [r, server] of servers.entries()) replicas[r].rssIdle = rssBytes(server.pid);
    for (const server of servers) process.kill(server.pid, 'SIGUSR2');
    await sleep(2000);
    for (const [r, server] of servers.entries()) replicas[r].rssGc = rssBytes(server.pid);
    for (const server of servers) process.kill(server.pid, 'SIGURG');
    await sleep(2000);
    for (const [r, server] of servers.entries()) {
      const rep = replicas[r];
      rep.rssRetained = rssBytes(server.pid);
      rep.perIdle = (rep.rssIdle - rep.rss0) / rep.connected;
      rep.perGc = (rep.rssGc - rep.rss0) / rep.connected;
      rep.perRetained = (rep.rssRetained - rep.rss0) / rep.connected;
      log(
        `${kind} replica ${r + 1}: ${rep.connected} clients, RSS ${mib(rep.rss0)} → ${mib(rep.rssIdle)} MiB no forced GC, ` +
          `${(rep.perIdle / 1000).toFixed(1)} KB per client (${(rep.perGc / 1000).toFixed(1)} after gc(), ${(rep.perRetained / 1000).toFixed(1)} after the memory-reducing GC)`,
      );
    }

    // Relay: closed loop on every generator at once (throughput), then the open loop (percentiles).
    const relayCpu0 = servers.map((server) => cpuSeconds(server.pid));
    const redisRelay0 = redisMark(redis);
    const loops = await Promise.all(
      gens.map((gen) => gen.call('closedLoop', { warmupMs: 2000, durationMs: opts.relaySeconds * 1000, group: 'active' })),
    );
    const redisRelay1 = redisMark(redis);
    const relayCpu = servers.map((server, r) => cpuSeconds(server.pid) - relayCpu0[r]);
    const perSecond = loops.reduce((n, l) => n + l.perSecond, 0);
    const rtErrors = loops.reduce((n, l) => n + l.errors, 0);
    const open = await Promise.all(
      gens.map((gen) =>
        gen.call('openLoop', { ratePerS: opts.rate / gens.length, warmupMs: 2000, durationMs: opts.relaySeconds * 1000, group: 'active' }),
      ),
    );
    const latencies = open.flatMap((o) => o.latencies).sort((a, b) => a - b);
    const latErrors = open.reduce((n, o) => n + o.errors + o.lost, 0);
    const redisEnd = redisMark(redis);
    for (const [r, server] of servers.entries()) replicas[r].rssEnd = rssBytes(server.pid);
    const still = (await Promise.all(gens.map((gen) => gen.call('count', {})))).reduce((n, c) => n + c.connected, 0);

    const redisStats = {
      connect: redisLoad(redis0, redisConnected),
      idle: redisLoad(redisConnected, redisSettled),
      relay: redisLoad(redisRelay0, redisRelay1),
      usedMemory0: redis0.usedMemory,
      usedMemoryIdle: redisSettled.usedMemory,
      usedMemoryEnd: redisEnd.usedMemory,
      rssEnd: redisEnd.rss,
      clients: redisSettled.clients,
    };
    const r = {
      kind,
      connected,
      failed,
      stillConnected: still,
      connectSeconds,
      activeConnected,
      perSecond,
      rtErrors,
      relayCpu,
      p50: percentile(latencies, 0.5),
      p99: percentile(latencies, 0.99),
      latSamples: latencies.length,
      latErrors,
      replicas,
      redis: redisStats,
    };
    log(
      `${kind} × ${servers.length}: ${activeConnected} active clients, ${perSecond.toFixed(0)} round trips/s (${rtErrors} errors), ` +
        `at ${opts.rate}/s p50 ${r.p50.toFixed(2)} ms, p99 ${r.p99.toFixed(2)} ms (${latencies.length} samples, ${latErrors} errors/lost); ` +
        `Redis ${redisStats.relay.opsPerS.toFixed(0)} commands/s, ${redisStats.relay.cpuPercent.toFixed(0)} % CPU while relaying, ` +
        `${redisStats.idle.opsPerS.toFixed(0)} commands/s, ${redisStats.idle.cpuPercent.toFixed(1)} % idle, ` +
        `used memory ${mib(redisStats.usedMemory0)} → ${mib(redisStats.usedMemoryIdle)} MiB; ${still}/${connected} still connected`,
    );
    return r;
  } finally {
    for (const child of procs.children) if (child.connected) child.disconnect?.();
    await procs.stopAll();
  }
}

/**
 * The file-descriptor limit the processes get: NOFILE if the hard limit may be raised (root with
 * CAP_SYS_RESOURCE), else the hard limit as it is. One server socket is one descriptor.
 */
function descriptorLimit() {
  const probe = spawnSync('sh', ['-c', `ulimit -Hn ${NOFILE} 2>/dev/null; ulimit -Hn`], { encoding: 'utf8' });
  const hard = probe.stdout.trim();
  return hard === 'unlimited' ? NOFILE : Number(hard);
}

/** Runs the phase for each kind; returns { opts, results: { baseline, hub } }. */
export async function scalePhase(options = {}) {
  const nofile = descriptorLimit();
  const requested = Number(options.clients ?? 50_000);
  const replicas = Math.max(1, Number(options.replicas ?? 1));
  // Descriptors a process needs besides its sockets: runtimes, listeners, files, Redis, IPC.
  const perProcess = nofile - 200;
  const clients = Math.min(requested, perProcess * replicas);
  if (clients < requested) {
    log(
      `the file-descriptor hard limit is ${nofile} and cannot be raised here (needs root with CAP_SYS_RESOURCE): ` +
        `${clients} clients instead of ${requested}${replicas === 1 ? ' (--replicas=3 spreads 50,000 over three processes)' : ''}`,
    );
  }
  const opts = {
    requested,
    nofile,
    clients,
    replicas,
    perGenerator: Math.min(Number(options['per-generator'] ?? PER_GENERATOR), nofile - 500),
    active: Number(options.active ?? 1000),
    settleS: Number(options.settle ?? 20),
    relaySeconds: Number(options['relay-seconds'] ?? 10),
    rate: Number(options.rate ?? 1000),
    window: Number(options.window ?? 64),
    kinds: (options.kinds ?? (replicas > 1 ? 'hub' : 'baseline,hub')).split(','),
    hubNodeFlags: options['hub-node-flags']?.split(' ').filter(Boolean) ?? HUB_NODE_FLAGS,
  };
  const env = scaleEnv(options.hub ?? 'dist/main.js');
  const results = {};
  const limitMs = replicas > 1 ? REPLICAS_PHASE_LIMIT_MS : PHASE_LIMIT_MS;
  const limit = setTimeout(() => {
    log(`gave up after ${limitMs / 60_000} minutes`);
    process.exit(1); // the exit handler above kills every process the phase started
  }, limitMs);
  try {
    let base = 2;
    for (const kind of opts.kinds) {
      results[kind] = replicas > 1 ? await measureReplicas(kind, opts, env, base) : await measureOne(kind, opts, env, base);
      base += Math.ceil(opts.clients / PER_ADDRESS) + 1;
      await sleep(2000);
    }
  } finally {
    clearTimeout(limit);
  }
  return { opts, results };
}

/** Markdown rows for bench/run.mjs's table (and so docs/benchmarks.md). */
export function scaleRows({ opts, results }) {
  if (opts.replicas > 1) return replicaRows({ opts, results });
  const h = results.hub;
  const b = results.baseline;
  const kb = (r, key) => (r ? (r[key] / 1000).toFixed(1) : 'n/a');
  const ratio = (key) => (h && b ? (h[key] / b[key]).toFixed(2) : 'n/a');
  const n = opts.clients.toLocaleString('en-US');
  const verdict = (ok) => (ok === undefined ? '—' : ok ? 'pass' : '**FAIL**');
  const held = h && h.connected >= opts.requested && h.stillConnected === h.connected && h.perSecond > 0;
  const lean = h && b ? h.perIdle <= 20_000 && h.perIdle <= 0.8 * b.perIdle : undefined;
  const rows = [
    [
      `${n} clients on one replica: connected (failed), connect time`,
      (r) => (r ? `${r.connected} (${r.failed}), ${r.connectSeconds.toFixed(1)} s` : 'n/a'),
      ratio('connectSeconds'),
      `${opts.requested.toLocaleString('en-US')}`,
      h ? held : undefined,
    ],
    [
      `… RSS per client ${opts.settleS} s after the burst, no forced GC (KB)`,
      (r) => kb(r, 'perIdle'),
      ratio('perIdle'),
      '≤ 20 KB, ≤ 0.8 × baseline',
      lean,
    ],
    [`… RSS per client after gc() (KB)`, (r) => kb(r, 'perGc'), ratio('perGc'), '—'],
    [`… RSS per client after the memory-reducing GC (KB)`, (r) => kb(r, 'perRetained'), ratio('perRetained'), '—'],
    [
      `… round trips/s for ${opts.active.toLocaleString('en-US')} active clients alongside (server RSS at the end, MiB)`,
      (r) => (r ? `${r.perSecond.toFixed(0)} (${mib(r.rssRelaying)})` : 'n/a'),
      ratio('perSecond'),
      '—',
    ],
  ];
  return rows.map(([metric, value, r, target, ok]) => `| ${metric} | ${value(h)} | ${value(b)} | ${r} | ${target} | ${verdict(ok)} |`);
}

/** The rows of a run over several replicas (the baseline column when --kinds named it too). */
function replicaRows({ opts, results }) {
  const h = results.hub;
  const b = results.baseline;
  const verdict = (ok) => (ok === undefined ? '—' : ok ? 'pass' : '**FAIL**');
  const mean = (r, key) => r.replicas.reduce((sum, rep) => sum + rep[key], 0) / r.replicas.length;
  const ratio = (f) => (h && b ? (f(h) / f(b)).toFixed(2) : 'n/a');
  const each =
    (f, digits = 1) =>
    (r) =>
      r ? r.replicas.map((rep) => f(rep).toFixed(digits)).join(' / ') : 'n/a';
  const three =
    (f, digits = 0) =>
    (r) =>
      r ? ['connect', 'idle', 'relay'].map((w) => f(r.redis[w]).toFixed(digits)).join(' / ') : 'n/a';
  const n = opts.clients.toLocaleString('en-US');
  const held = h && h.connected >= opts.requested && h.stillConnected === h.connected && h.perSecond > 0 && h.rtErrors === 0;
  const rows = [
    [
      `${n} clients over ${opts.replicas} replicas and one Redis: connected (failed), connect time (connects/s)`,
      (r) =>
        r ? `${r.connected} (${r.failed}), ${r.connectSeconds.toFixed(1)} s (${(r.connected / r.connectSeconds).toFixed(0)}/s)` : 'n/a',
      ratio((r) => r.connectSeconds),
      `${opts.requested.toLocaleString('en-US')}, all still connected at the end`,
      h ? held : undefined,
    ],
    [`… clients per replica`, each((rep) => rep.connected, 0), '—', '—'],
    [
      `… RSS per client per replica ${opts.settleS} s after the burst, no forced GC (KB)`,
      each((rep) => rep.perIdle / 1000),
      ratio((r) => mean(r, 'perIdle')),
      '≤ 20 KB',
      h ? h.replicas.every((rep) => rep.perIdle <= 20_000) : undefined,
    ],
    [`… RSS per client per replica after gc() (KB)`, each((rep) => rep.perGc / 1000), ratio((r) => mean(r, 'perGc')), '—'],
    [
      `… RSS per client per replica after the memory-reducing GC (KB)`,
      each((rep) => rep.perRetained / 1000),
      ratio((r) => mean(r, 'perRetained')),
      '—',
    ],
    [
      `… RSS per replica with its clients, no forced GC (MiB)`,
      each((rep) => rep.rssIdle / 2 ** 20, 0),
      ratio((r) => mean(r, 'rssIdle')),
      '—',
    ],
    [`Redis commands/s: connect burst / idle / relaying`, three((w) => w.opsPerS), ratio((r) => r.redis.relay.opsPerS), '—'],
    [`Redis CPU (% of one core): connect burst / idle / relaying`, three((w) => w.cpuPercent), ratio((r) => r.redis.relay.cpuPercent), '—'],
    [
      `Redis used memory: before / with the clients / at the end (MiB)`,
      (r) => (r ? [r.redis.usedMemory0, r.redis.usedMemoryIdle, r.redis.usedMemoryEnd].map((v) => mib(v)).join(' / ') : 'n/a'),
      ratio((r) => r.redis.usedMemoryIdle),
      '—',
    ],
    [
      `Round trips/s of ${opts.active.toLocaleString('en-US')} active clients among them, closed loop, bots on replica 1 (errors)`,
      (r) => (r ? `${r.perSecond.toFixed(0)} (${r.rtErrors})` : 'n/a'),
      ratio((r) => r.perSecond),
      '—',
    ],
    [
      `… p50 / p99 round trip at ${opts.rate}/s offered (ms)`,
      (r) => (r ? `${r.p50.toFixed(2)} / ${r.p99.toFixed(2)}` : 'n/a'),
      ratio((r) => r.p99),
      '—',
    ],
  ];
  return rows.map(([metric, value, r, target, ok]) => `| ${metric} | ${value(h)} | ${value(b)} | ${r} | ${target} | ${verdict(ok)} |`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  requireHubNode();
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => process.exit(130));
  const args = Object.fromEntries(process.argv.slice(2).map((a) => a.replace(/^--/, '').split(/=(.*)/s).slice(0, 2)));
  const out = await scalePhase(args);
  const header = '| metric | hub | baseline | hub ÷ baseline | target | result |\n|---|---|---|---|---|---|';
  process.stdout.write(`${header}\n${scaleRows(out).join('\n')}\n${JSON.stringify(out, null, 2)}\n`);
}
