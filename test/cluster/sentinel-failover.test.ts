import { isReady } from '../helpers/cluster';
import { acceptsHandshake, botAndTab, RECOVERY_BOUND_MS, warnings } from '../helpers/failover';
import { startHub, type TestHub } from '../helpers/hub';
import { startRedisSentinel, type TestSentinel } from '../helpers/redis-topologies';
import { sleep, waitFor } from '../helpers/wait';

// The Sentinel counterpart of cluster-failover.test.ts (issue 40, item 1): two replicas, a user on
// B, the bot on A; the master is SIGKILLed and Sentinel promotes the replica. Both replicas must
// accept handshakes again within seconds of the promotion, the tab come back by itself, and relay
// resume both ways with every acked send and reply delivered.

let sentinel: TestSentinel;
let a: TestHub;
let b: TestHub;
const logsB: string[] = [];

beforeAll(async () => {
  sentinel = await startRedisSentinel();
  const env = { ...sentinel.env, PRESENCE_TTL_S: '3', AGENT_ACK_TIMEOUT_MS: '3000', LOG_LEVEL: 'info' };
  [a, b] = await Promise.all([startHub(env), startHub(env, { logLines: logsB })]);
  await Promise.all([a, b].map((h) => waitFor(() => isReady(h.url), 15_000, `${h.url} ready`)));
}, 60_000);

afterAll(async () => {
  await Promise.all([a?.close(), b?.close()]);
  await sentinel?.close();
}, 30_000);

it('a user on B is back within seconds of the promotion, and relay resumes both ways with nothing acked lost', async () => {
  const bot = 'sentinel-bot';
  const user = 'sentinel-user';
  const { agent, chat, seenByBot, repliesAcked, shown, states } = await botAndTab(a, b, bot, user);
  const acked: string[] = [];
  const sends: Promise<void>[] = [];
  let stop = false;
  try {
    const traffic = (async () => {
      for (let n = 1; !stop; n++) {
        const text = `s${n}`;
        sends.push(
          chat.send(text).then(
            () => void acked.push(text),
            () => {},
          ),
        );
        await sleep(500);
      }
    })();

    const victim = await sentinel.master();
    const killedAt = Date.now();
    await victim.kill();
    await waitFor(async () => (await sentinel.master()) !== victim, 30_000, 'a replica promoted');
    const promotedAt = Date.now();

    const refusals: Record<'a' | 'b', string[]> = { a: [], b: [] };
    const recovered = { a: 0, b: 0, tab: 0 };
    await waitFor(
      async () => {
        if (!recovered.a && (await acceptsHandshake(a, bot, refusals.a))) recovered.a = Date.now();
        if (!recovered.b && (await acceptsHandshake(b, bot, refusals.b))) recovered.b = Date.now();
        if (!recovered.tab && chat.state === 'connected') recovered.tab = Date.now();
        return recovered.a > 0 && recovered.b > 0 && recovered.tab > 0;
      },
      RECOVERY_BOUND_MS,
      'both replicas accepting handshakes and the tab connected',
    ).catch((err: Error) => {
      throw new Error(
        `${err.message}: promoted ${promotedAt - killedAt} ms after the kill; refusals A ${refusals.a.length} ${[...new Set(refusals.a)]}, B ${refusals.b.length} ${[...new Set(refusals.b)]}; tab ${chat.state}; B's warnings: ${warnings(logsB).slice(-10).join(' | ')}`,
      );
    });
    const away = states.filter((s) => s.at > killedAt && s.state !== 'connected').map((s) => s.code ?? s.state);

    stop = true;
    await traffic;
    let settled = 0;
    for (const send of sends) void send.finally(() => settled++);
    await waitFor(() => settled === sends.length, 15_000, 'every send acked or refused');
    await chat.send('after');
    await waitFor(() => shown.includes('echo:after'), 15_000, 'user → bot → user after the failover');
    await agent.reply(user, 'from the bot, unprompted');
    await waitFor(() => shown.includes('from the bot, unprompted'), 15_000, 'bot → user after the failover');

    await waitFor(() => acked.every((t) => seenByBot.includes(t)), 10_000, 'acked sends at the bot').catch(() => {});
    expect(acked.filter((t) => !seenByBot.includes(t))).toEqual([]);
    await waitFor(() => repliesAcked.every((t) => shown.includes(t)), 15_000, 'acked replies on the tab').catch(() => {});
    expect(repliesAcked.filter((t) => !shown.includes(t))).toEqual([]);
    process.stdout.write(
      `sentinel failover: promoted ${promotedAt - killedAt} ms after the kill; A accepts ${recovered.a - promotedAt} ms, B ${recovered.b - promotedAt} ms, tab connected ${recovered.tab - promotedAt} ms after; refusals A ${refusals.a.length}, B ${refusals.b.length}; tab left ${away.length} times (${away}); ${acked.length} of ${sends.length} sends acked, ${repliesAcked.length} replies, all delivered\n`,
    );
  } finally {
    stop = true;
    chat.close();
    agent.close();
  }
}, 90_000);
