// The relay phases of `npm run bench` (bench/run.mjs): the hub against the baseline on one replica
// (`throughput`: round trips, latency, handshakes), on two over Redis (`cluster`), and a fresh
// replica's memory per idle client, 10,000 concurrent clients and a reconnect storm (`memory`). Each
// writes its figures into ctx.results for the report (bench/report.mjs).
import { alternate, connectLoad, relayMeasurements } from './relay-measurements.mjs';
import { sleep, stop } from './proc.mjs';
import { settledRss } from './run-processes.mjs';

/** One replica each: throughput, latency, then handshakes per second. */
export async function throughputPhase(ctx) {
  const { gen } = ctx;
  const servers = { baseline: await ctx.startServer('baseline'), hub: await ctx.startServer('hub') };
  try {
    for (const kind of ctx.kinds) await connectLoad(ctx, gen, kind, servers[kind], servers[kind], 'tp');
    const m = await relayMeasurements(ctx, gen, (kind) => [servers[kind]], '1 replica');
    await gen.call('closeAll');
    const hs = await alternate(
      (kind) =>
        gen.call('handshakes', {
          url: servers[kind].url,
          count: Math.ceil(ctx.load.handshakes / ctx.rounds),
          concurrency: ctx.load.handshakeConcurrency,
          agentId: ctx.agentIds[0],
          secret: ctx.secret,
        }),
      ctx.kinds,
      ctx.rounds,
    );
    for (const kind of ctx.kinds) {
      const ok = hs[kind].reduce((n, r) => n + r.ok, 0);
      const ms = hs[kind].reduce((n, r) => n + r.elapsedMs, 0);
      const failed = hs[kind].reduce((n, r) => n + r.failed, 0);
      ctx.log(`${kind} handshakes: ${((ok / ms) * 1000).toFixed(0)}/s (${ok} ok, ${failed} failed)`);
      Object.assign(ctx.results[kind], {
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
export async function memoryPhase(ctx, kind) {
  const { gen, gen2 } = ctx;
  const server = await ctx.startServer(kind);
  try {
    // Load the connection code paths once, then let the heap settle before the reference reading.
    await gen.call('clients', { url: server.url, count: 50, agentIds: ['idle'], secret: ctx.secret, tag: 'warm' });
    await gen.call('closeAll');
    const rss0 = await settledRss(server.pid);
    const idle = await gen.call('clients', { url: server.url, count: ctx.load.idle, agentIds: ['idle'], secret: ctx.secret, tag: 'idle' });
    const rss1 = await settledRss(server.pid);
    const perConn = (rss1.retained - rss0.retained) / idle.connected;
    const perConnAfterGc = (rss1.afterGc - rss0.afterGc) / idle.connected;
    const mib = (bytes) => (bytes / 2 ** 20).toFixed(1);
    ctx.log(
      `${kind}: ${idle.connected} idle clients, retained RSS ${mib(rss0.retained)} → ${mib(rss1.retained)} MiB, ${(perConn / 1024).toFixed(1)} KiB each; ` +
        `after a plain gc() ${mib(rss0.afterGc)} → ${mib(rss1.afterGc)} MiB, ${(perConnAfterGc / 1024).toFixed(1)} KiB each`,
    );

    const t0 = Date.now();
    const more = await gen2.call('clients', {
      url: server.url,
      count: ctx.load.concurrent - idle.connected,
      agentIds: ['idle'],
      secret: ctx.secret,
      tag: 'idle2',
    });
    const connectSeconds = (Date.now() - t0) / 1000;
    const concurrent = idle.connected + more.connected;
    // While they are all connected: a little relay traffic must still flow.
    await gen2.call('agents', { url: server.url, agentIds: ['probe'], apiKey: ctx.apiKey, group: 'probe' });
    const probeClients = await gen2.call('clients', {
      url: server.url,
      count: 10,
      agentIds: ['probe'],
      secret: ctx.secret,
      tag: 'probe',
      group: 'probe',
    });
    const probe = await gen2.call('closedLoop', { warmupMs: 500, durationMs: 3000, group: 'probe' });
    const rss2 = (await settledRss(server.pid)).afterGc;
    ctx.log(
      `${kind}: ${concurrent} concurrent clients (+${more.connected} in ${connectSeconds.toFixed(1)} s, ${more.failed} failed), ` +
        `RSS ${(rss2 / 2 ** 20).toFixed(0)} MiB, ${probe.perSecond.toFixed(0)} round trips/s alongside`,
    );
    await gen.call('closeAll');
    await gen2.call('closeAll');
    await sleep(3000); // let the server finish tearing down 10,000 sessions before the storm

    const storm = await gen.call('clients', {
      url: server.url,
      count: ctx.load.storm,
      agentIds: ['storm'],
      secret: ctx.secret,
      tag: 'storm',
      reconnection: true,
    });
    const s = await gen.call('storm', { timeoutMs: 60_000 });
    ctx.log(`${kind}: reconnect storm, ${s.back}/${s.total} back in ${s.seconds.toFixed(2)} s (${storm.connected} connected before)`);
    Object.assign(ctx.results[kind], {
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
export async function clusterPhase(ctx) {
  const { gen } = ctx;
  const redis = await ctx.startRedis();
  const servers = {};
  try {
    for (const kind of ctx.kinds) servers[kind] = [await ctx.startServer(kind, redis.url), await ctx.startServer(kind, redis.url)];
    for (const kind of ctx.kinds) await connectLoad(ctx, gen, kind, servers[kind][0], servers[kind][1], 'cl');
    const m = await relayMeasurements(ctx, gen, (kind) => servers[kind], '2 replicas', ctx.kinds, redis.child.pid);
    for (const kind of ctx.kinds) {
      Object.assign(ctx.results[kind], {
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
