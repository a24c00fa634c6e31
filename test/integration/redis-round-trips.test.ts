import Redis from 'ioredis';
import type { Socket } from 'socket.io-client';
import type { SendAck } from '../../src/protocol';
import type { AgentStream, RelayAgent } from '../../src/sdk/agent';
import { startHub, type TestHub } from '../helpers/hub';
import { startRedis, type TestRedis } from '../helpers/redis-server';

/**
 * The hot path's cost in Redis commands (docs/architecture.md, "A client message"): a relayed client
 * message is one command on the sending replica's side (the intake script, which also reads who holds
 * the conversation and hands the message to the runtime's replica) and two pipelined on the
 * runtime's (the delivered mark, the ack); a bot's reply is one (the append, which also reads who
 * holds the conversation and publishes); a stream's start is its open (which reads it too) and two
 * that follow it (the owner's keep-alive, the start's publish). The control state's own read
 * (HMGET) is never on these paths. Counted with INFO commandstats around N of each, on a real
 * redis-server shared by two replicas; the few commands of background timers meanwhile (presence
 * refresh, canary) fit within the slack.
 */
const N = 40;
const SLACK = 8;

/**
 * The commands clients sent Redis while `work` ran, total and per command, seen through MONITOR:
 * what a script calls is left out (MONITOR names its source `lua`; INFO commandstats would count it).
 */
/** What the probe's connection and the count itself send. */
const PROBES = new Set(['info', 'echo', 'client', 'hello', 'monitor']);

async function commandsDuring(url: string, work: () => Promise<void>): Promise<{ total: number; by: Record<string, number> }> {
  const monitor = await new Redis(url).monitor();
  const by: Record<string, number> = {};
  let total = 0;
  monitor.on('monitor', (_time: string, args: string[], source: string) => {
    const name = args[0].toLowerCase();
    if (source === 'lua' || PROBES.has(name)) return;
    by[name] = (by[name] ?? 0) + 1;
    total++;
  });
  try {
    await work();
    // A command sent before the work ended is seen once a PING sent after it comes back.
    await pingThrough(monitor, url);
  } finally {
    monitor.disconnect();
  }
  return { total, by };
}

/** Resolves once the monitor has seen a PING sent now on another connection (then everything before it). */
async function pingThrough(monitor: Redis, url: string): Promise<void> {
  const marker = `monitor-marker-${Math.random()}`;
  const seen = new Promise<void>((resolve) => monitor.on('monitor', (_t: string, args: string[]) => args[1] === marker && resolve()));
  const probe = new Redis(url);
  await probe.echo(marker);
  await seen;
  probe.disconnect();
}

describe('Redis commands per relayed message (two replicas on one Redis server)', () => {
  let redis: TestRedis;
  let a: TestHub;
  let b: TestHub;
  let bot: RelayAgent;
  let user: Socket;
  beforeAll(async () => {
    redis = await startRedis();
    // One socket sends the N messages back to back: its own event bucket (burst 40, local to the
    // replica, no Redis command) would refuse some on a fast machine, so it is off here.
    a = await startHub({ REDIS_URL: redis.url, MESSAGE_RATE_PER_S: '0' });
    b = await startHub({ REDIS_URL: redis.url, MESSAGE_RATE_PER_S: '0' });
    bot = await a.agent('counted');
    bot.onMessage(() => {});
    user = await b.client('counted', { sub: 'counted-user' });
    // Warm-up: scripts loaded (EVAL once), connections made, the conversation's keys created.
    for (let i = 0; i < 3; i++) await send(user, `warm-${i}`);
    await bot.reply('counted-user', 'warm');
    await (await bot.stream('counted-user')).end();
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
    await redis?.close();
  });

  it("a client message relayed to a runtime on the other replica: 1 command on the sender's replica (the intake), 2 pipelined on the runtime's (delivered mark, ack)", async () => {
    const counted = await commandsDuring(redis.url, async () => {
      for (let i = 0; i < N; i++) expectOk(await send(user, `m-${i}`));
    });
    report('client message', counted);
    expect(counted.total).toBeLessThanOrEqual(3 * N + SLACK);
    expect(counted.by.evalsha).toBe(N);
    expect(counted.by.hmget ?? 0).toBeLessThan(N / 2);
  });

  it('a bot reply: 1 command (the append, which reads the control state and publishes)', async () => {
    const arrived = new Promise<void>((resolve) => {
      let n = 0;
      user.on('message', () => ++n === N && resolve());
    });
    const counted = await commandsDuring(redis.url, async () => {
      for (let i = 0; i < N; i++) await bot.reply('counted-user', `r-${i}`);
      await arrived;
    });
    report('bot reply', counted);
    expect(counted.total).toBeLessThanOrEqual(N + SLACK);
    expect(counted.by.hmget ?? 0).toBeLessThan(N / 2);
  });

  it("a stream start: the open (which reads the control state), then the owner's keep-alive and the start's publish", async () => {
    const streams: AgentStream[] = [];
    const counted = await commandsDuring(redis.url, async () => {
      for (let i = 0; i < N; i++) streams.push(await bot.stream('counted-user'));
    });
    for (const s of streams) await s.end();
    report('stream start', counted);
    expect(counted.total).toBeLessThanOrEqual(3 * N + SLACK);
    expect(counted.by.hmget ?? 0).toBeLessThan(N / 2);
  });
});

/** Fails with the refusal's code and message, not a bare `false`. */
function expectOk(ack: SendAck): void {
  if (!ack.ok) throw new Error(`refused: ${JSON.stringify(ack.error)}`);
}

function send(socket: Socket, text: string): Promise<SendAck> {
  return socket.timeout(5000).emitWithAck('message', { clientMessageId: `${text}-${Math.random()}`, text });
}

/** Prints the figures (docs/architecture.md quotes them). */
function report(what: string, { total, by }: { total: number; by: Record<string, number> }): void {
  if (process.env.ROUND_TRIPS_REPORT) console.log(`${what}: ${(total / N).toFixed(2)} commands each`, by);
}
