// The history phase of `npm run bench` (`--phases=history`): the hub against itself with the
// conversation log off and on, one replica and two over Redis, then a recovery storm: clients
// reconnecting at once with lastMessageId (docs/protocol.md). Writes its figures into
// ctx.results.logOff and ctx.results.logOn for the report (bench/report.mjs).
import { connectLoad, relayMeasurements } from './relay-measurements.mjs';
import { stop } from './proc.mjs';

/** Hub settings of the two sides of the history phase. */
const LOG_ENV = { logOff: { HISTORY_ENABLED: 'false' }, logOn: { HISTORY_ENABLED: 'true' } };
const LOG_KINDS = Object.keys(LOG_ENV);

/**
 * The conversation log's cost: the hub with HISTORY_ENABLED=false against itself with it on, under
 * the standard load, on one replica (in-memory log) and on two over Redis (Redis Streams; each side
 * on its own redis-server). Then a recovery storm on the two-replica log: clients that missed
 * replies all reconnect at once with lastMessageId.
 */
export async function historyPhase(ctx) {
  const { gen, gen2 } = ctx;
  const one = {};
  try {
    for (const kind of LOG_KINDS) one[kind] = await ctx.startServer('hub', undefined, LOG_ENV[kind]);
    for (const kind of LOG_KINDS) await connectLoad(ctx, gen, kind, one[kind], one[kind], 'h1');
    const m = await relayMeasurements(ctx, gen, (kind) => [one[kind]], '1 replica', LOG_KINDS);
    for (const kind of LOG_KINDS)
      Object.assign(ctx.results[kind], { rt1: m[kind].rt, p50: m[kind].p50, p99: m[kind].p99, rtErrors1: m[kind].rtErrors });
  } finally {
    await gen.call('closeAll').catch(() => {});
    for (const server of Object.values(one)) await stop(server.child);
  }

  const redis = {};
  const two = {};
  try {
    for (const kind of LOG_KINDS) {
      redis[kind] = await ctx.startRedis();
      two[kind] = [
        await ctx.startServer('hub', redis[kind].url, LOG_ENV[kind]),
        await ctx.startServer('hub', redis[kind].url, LOG_ENV[kind]),
      ];
    }
    for (const kind of LOG_KINDS) await connectLoad(ctx, gen, kind, two[kind][0], two[kind][1], 'h2');
    const m = await relayMeasurements(ctx, gen, (kind) => two[kind], '2 replicas', LOG_KINDS);
    for (const kind of LOG_KINDS) {
      Object.assign(ctx.results[kind], { rt2: m[kind].rt, p50c: m[kind].p50, p99c: m[kind].p99, rtErrors2: m[kind].rtErrors });
    }
    await gen.call('closeAll');

    // Recovery storm: runtimes on replica 1, clients on replica 2, over two generator processes.
    const [agentsOn, clientsOn] = two.logOn;
    await gen.call('agents', { url: agentsOn.url, agentIds: ctx.agentIds, apiKey: ctx.apiKey, group: 'rs' });
    const half = ctx.load.recoveryStorm / 2;
    const setups = await Promise.all(
      [gen, gen2].map((g, i) =>
        g.call('recoverySetup', {
          url: clientsOn.url,
          count: half,
          agentIds: ctx.agentIds,
          secret: ctx.secret,
          tag: `rs${i}`,
          group: 'rs',
        }),
      ),
    );
    const subs = setups.map((r) => r.clients);
    // Every client sees one reply, goes away, and the bots reply `recoveryMissed` times to each.
    await gen.call('replyTo', { group: 'rs', clients: subs.flat(), times: 1 }, 300_000);
    await Promise.all([gen, gen2].map((g) => g.call('recoveryLeave', { group: 'rs' })));
    const replies = await gen.call('replyTo', { group: 'rs', clients: subs.flat(), times: ctx.load.recoveryMissed }, 300_000);
    const storms = await Promise.all(
      [gen, gen2].map((g) => g.call('recoveryStorm', { group: 'rs', expect: ctx.load.recoveryMissed, timeoutMs: 120_000 }, 180_000)),
    );
    const back = storms.reduce((n, r) => n + r.complete, 0);
    const seconds = Math.max(...storms.map((r) => r.seconds));
    const notRecovered = storms.reduce((n, r) => n + r.notRecovered, 0);
    const doubled = storms.reduce((n, r) => n + r.doubled, 0);
    ctx.log(
      `recovery storm: ${back}/${ctx.load.recoveryStorm} clients had all ${ctx.load.recoveryMissed} missed replies after ${seconds.toFixed(2)} s ` +
        `(${replies.errors} reply errors, ${notRecovered} not recovered, ${doubled} doubled)`,
    );
    Object.assign(ctx.results.logOn, {
      recoverySeconds: back === ctx.load.recoveryStorm ? seconds : Infinity,
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
