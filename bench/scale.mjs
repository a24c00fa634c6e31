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
// Its parts: scale-processes.mjs (the processes, the source addresses, /proc readings),
// scale-replicas.mjs (the measurement over several replicas and Redis), scale-rows.mjs (the table rows).
import { spawnSync } from 'node:child_process';
import { HUB_NODE_FLAGS, requireHubNode } from './hub-env.mjs';
import { mib, rssBytes, sleep } from './proc.mjs';
import { clientAddresses, cpuSeconds, generator, log, Processes, scaleEnv, share, startServer } from './scale-processes.mjs';
import { measureReplicas } from './scale-replicas.mjs';
import { scaleRows } from './scale-rows.mjs';

const NOFILE = 200_000;
const PER_GENERATOR = 12_500;
const PHASE_LIMIT_MS = 15 * 60_000;
const REPLICAS_PHASE_LIMIT_MS = 30 * 60_000;

/**
 * One server, fresh: connect burst; RSS of the idle clients without GC, then after gc() and after
 * the memory-reducing GC; then relay for the active clients (all others still connected).
 */
async function measureOne(kind, opts, env, addressBase) {
  const procs = new Processes(opts.nofile);
  const nodeFlags = kind === 'hub' ? opts.hubNodeFlags : [];
  const server = await startServer(procs, kind, env, nodeFlags);
  const gens = Array.from({ length: Math.max(1, Math.ceil(opts.clients / opts.perGenerator)) }, () => generator(procs));
  const addresses = clientAddresses(opts.clients, addressBase);
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
    process.exit(1); // scale-processes.mjs's exit handler kills every process the phase started
  }, limitMs);
  try {
    let base = 2;
    for (const kind of opts.kinds) {
      results[kind] = replicas > 1 ? await measureReplicas(kind, opts, env, base) : await measureOne(kind, opts, env, base);
      base += clientAddresses(opts.clients, base).length + 1;
      await sleep(2000);
    }
  } finally {
    clearTimeout(limit);
  }
  return { opts, results };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  requireHubNode();
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => process.exit(130));
  const args = Object.fromEntries(process.argv.slice(2).map((a) => a.replace(/^--/, '').split(/=(.*)/s).slice(0, 2)));
  const out = await scalePhase(args);
  const header = '| metric | hub | baseline | hub ÷ baseline | target | result |\n|---|---|---|---|---|---|';
  process.stdout.write(`${header}\n${scaleRows(out).join('\n')}\n${JSON.stringify(out, null, 2)}\n`);
}
