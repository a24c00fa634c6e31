import type { Socket } from 'socket.io-client';
import { Events, type ClientInboundMessage, type HistoryAck, type SessionInfo } from '../../src/protocol';
import { RelayChat } from '../../sdk/browser/src';
import type { RelayAgent } from '../../src/sdk/agent';
import { clientSocket, connected, startHub, type TestHub } from '../helpers/hub';
import { mintToken } from '../helpers/tokens';
import { sleep } from '../helpers/wait';

const MISSED = 200;
const TEXT = 'y'.repeat(60_000);
const REPLAY_MAX = 1024 * 1024;
const bytesOf = (messages: readonly unknown[]) => messages.reduce<number>((sum, m) => sum + Buffer.byteLength(JSON.stringify(m)) + 1, 0);

/** Connects with `lastMessageId` and collects what comes before `session`, and `session`. */
async function reconnect(
  url: string,
  sub: string,
  lastMessageId: string,
): Promise<{ replayed: ClientInboundMessage[]; session: SessionInfo; socket: Socket }> {
  const socket = clientSocket(url, { token: mintToken({ sub }), agentId: 'big-bot', lastMessageId });
  const replayed: ClientInboundMessage[] = [];
  socket.on(Events.message, (m: ClientInboundMessage) => replayed.push(m));
  const session = new Promise<SessionInfo>((resolve) => socket.once(Events.session, resolve));
  await connected(socket);
  return { replayed, session: await session, socket };
}

/** A bot reply "hello" to `sub` (the old lastMessageId), then MISSED replies of 60 KB; their ids. */
async function missedReplies(bot: RelayAgent, sub: string): Promise<{ first: string; ids: string[] }> {
  const { id: first } = await bot.reply(sub, 'hello');
  const ids: string[] = [];
  for (let i = 0; i < MISSED; i++) ids.push((await bot.reply(sub, `${i} ${TEXT}`)).id);
  return { first, ids };
}

describe('replay on reconnect is bounded in bytes (REPLAY_MAX_BYTES)', () => {
  let t: TestHub;
  let bot: RelayAgent;
  beforeAll(async () => {
    // Paging the rest is not what is measured here: the history budgets are out of its way.
    t = await startHub({
      HISTORY_BYTES_PER_S: String(64 * 2 ** 20),
      HISTORY_BYTES_BURST: String(64 * 2 ** 20),
      USER_READ_BYTES_PER_S: String(64 * 2 ** 20),
      USER_READ_BYTES_BURST: String(64 * 2 ** 20),
      AGENT_DELIVERY_RATE_PER_S: '0',
      HISTORY_MAX_MESSAGES: '500',
    });
    bot = await t.agent('big-bot');
  });
  afterAll(() => t.close());

  it('replays the newest missed messages within the bound, says hasMore, and history gives the rest', async () => {
    const { first, ids } = await missedReplies(bot, 'reader');
    const { replayed, session, socket } = await reconnect(t.url, 'reader', first);
    try {
      console.log(`replayed ${replayed.length} of ${MISSED} messages, ${bytesOf(replayed)} bytes`);
      expect(session).toMatchObject({ recovered: true, hasMore: true });
      expect(bytesOf(replayed)).toBeLessThanOrEqual(REPLAY_MAX);
      expect(replayed.length).toBeGreaterThan(0);
      expect(replayed.map((m) => m.id)).toEqual(ids.slice(-replayed.length));
      // The continuation: history before the oldest replayed, back to the old lastMessageId.
      const paged: string[] = [];
      let before = replayed[0].id;
      for (;;) {
        const page: HistoryAck = await socket.timeout(10_000).emitWithAck(Events.history, { before, limit: 100 });
        if (!page.ok) throw new Error(`history refused: ${page.error.code}`);
        const at = page.messages.findIndex((m) => m.id === first);
        paged.unshift(...(at === -1 ? page.messages : page.messages.slice(at + 1)).map((m) => m.id));
        if (at !== -1 || !page.hasMore) break;
        before = page.messages[0].id;
      }
      expect([...paged, ...replayed.map((m) => m.id)]).toEqual(ids);
    } finally {
      socket.disconnect();
    }
  }, 120_000);

  it('the browser SDK pages in what a cut replay left out, each message once', async () => {
    // A chat that saw "hello" and went away: its stored resume point is that id.
    const storage = new Map<string, string>();
    const persist = { getItem: (k: string) => storage.get(k) ?? null, setItem: (k: string, v: string) => void storage.set(k, v) };
    const token = mintToken({ sub: 'sdk-reader' });
    const seed = new RelayChat({ url: t.url, agentId: 'big-bot', token, persist });
    await new Promise<void>((resolve) => seed.on('state', ({ state }) => state === 'connected' && resolve()));
    const hello = new Promise<void>((resolve) => seed.on('message', () => resolve()));
    const { id: first } = await bot.reply('sdk-reader', 'hello');
    await hello;
    seed.close();
    expect([...storage.values()]).toEqual([first]);
    const ids: string[] = [];
    for (let i = 0; i < MISSED; i++) ids.push((await bot.reply('sdk-reader', `${i} ${TEXT}`)).id);

    const chat = new RelayChat({ url: t.url, agentId: 'big-bot', token, persist });
    const got: string[] = [];
    const recovered: (boolean | undefined)[] = [];
    let gaps = 0;
    chat.on('message', (m) => got.push(m.id));
    chat.on('state', ({ state, recovered: r }) => state === 'connected' && recovered.push(r));
    chat.on('gap', () => gaps++);
    try {
      const deadline = Date.now() + 60_000;
      while (got.length < MISSED && Date.now() < deadline) await sleep(50);
      expect(recovered).toEqual([true]);
      expect(gaps).toBe(0);
      expect([...got].sort()).toEqual([...ids].sort());
      expect(new Set(got).size).toBe(got.length);
    } finally {
      chat.close();
    }
  }, 120_000);
});

describe("replay bytes spend the user's read budget (USER_READ_BYTES_*)", () => {
  it('bounds what a user reconnecting in a loop with an old lastMessageId is replayed', async () => {
    const h = await startHub({ AGENT_DELIVERY_RATE_PER_S: '0', HISTORY_MAX_MESSAGES: '500' });
    try {
      const bot = await h.agent('big-bot');
      const { first } = await missedReplies(bot, 'looper');
      const started = Date.now();
      let total = 0;
      let refused = 0; // with the budget spent, the log is not even read
      for (let i = 0; i < 12; i++) {
        const { replayed, session, socket } = await reconnect(h.url, 'looper', first);
        total += bytesOf(replayed);
        if (session.recovered === false) refused++;
        socket.disconnect();
      }
      const seconds = (Date.now() - started) / 1000;
      console.log(`12 reconnects in ${seconds.toFixed(1)} s were replayed ${total} bytes; ${refused} got recovered: false`);
      // The read budget's burst (4 MiB) and what refilled (1 MiB/s); before, 12 × the whole 12 MB.
      expect(total).toBeLessThanOrEqual(4 * 2 ** 20 + 2 ** 20 * seconds + REPLAY_MAX);
    } finally {
      await h.close();
    }
  }, 120_000);
});
