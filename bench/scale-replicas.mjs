// The scale bench over several replicas (bench/scale.mjs, --replicas=<n> above 1): one server
// kind's replicas over one private redis-server, the clients spread evenly over all, and Redis's load
// (commands/s, memory, CPU) read from its INFO beside the replicas' RSS and the round trips.
import { spawnSync } from 'node:child_process';
import { mib, rssBytes, sleep } from './proc.mjs';
import { clientAddresses, cpuSeconds, generator, log, Processes, share, startRedis, startServer } from './scale-processes.mjs';

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

const percentile = (sorted, q) => (sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]);

/**
 * Several replicas of one kind over one private redis-server, fresh: the bots on the first
 * replica, the clients (active and idle) spread evenly over all, so two thirds of the round trips
 * cross Redis. Connect burst from every generator at once; RSS of each replica before connecting
 * and with its idle clients, without forced GC, then after gc() and after the memory-reducing GC;
 * Redis's commands/s, memory and CPU over the burst, the idle settle and the relay; then closed-loop
 * round trips of the active clients (throughput) and an open loop at `rate`/s (p50/p99).
 */
export async function measureReplicas(kind, opts, env, addressBase) {
  const procs = new Processes(opts.nofile);
  try {
    const redis = await startRedis(procs);
    const nodeFlags = kind === 'hub' ? opts.hubNodeFlags : [];
    const servers = [];
    for (let r = 0; r < opts.replicas; r++) servers.push(await startServer(procs, kind, env, nodeFlags, redis.url));
    const gens = Array.from({ length: Math.ceil(opts.clients / opts.perGenerator) }, () => generator(procs));
    const addresses = clientAddresses(opts.clients, addressBase);

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
