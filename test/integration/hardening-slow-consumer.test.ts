import { request } from 'node:http';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { Socket as ServerSocket } from 'socket.io';
import { Namespaces, type HistoryAck, type SessionInfo } from '../../src/protocol';
import { clientSocket, connected, nextEvent, startHub, type TestHub } from '../helpers/hub';
import { RawEngine } from '../helpers/raw-engine';
import { mintToken } from '../helpers/tokens';

// A peer that stops reading must not make the hub buffer without bound (docs/operations.md, slow consumers and connection limits).
const MiB = 1024 * 1024;
const REPLY = 'x'.repeat(60_000);
/** Replies the bot sends at most to a paused client; unbounded, the hub would keep them all (~114 MiB). */
const MAX_REPLIES = 2000;
/** Replies the bot sends after the hub closed the paused client, to show they are still acked and logged. */
const AFTER_CLOSE = 10;

interface Retained {
  rss: number;
  external: number;
  heapTotal: number;
}

/**
 * RSS and external memory after full garbage collections: what is retained, not garbage. V8 frees
 * the memory of dead buffers after the collection, so it collects again a few times meanwhile.
 */
async function retained(): Promise<Retained> {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const { rss, external, heapTotal } = process.memoryUsage();
  return { rss, external, heapTotal };
}

function growth(before: Retained, after: Retained): Retained {
  return { rss: after.rss - before.rss, external: after.external - before.external, heapTotal: after.heapTotal - before.heapTotal };
}

const describeGrowth = (grew: Retained) =>
  `retained growth rss ${mib(grew.rss)} (V8 heap reserved ${mib(grew.heapTotal)}), external ${mib(grew.external)}`;

/** How the hub ends a transport it closes at once: `transport close`, or `transport error` when a write was still in flight. */
const CLOSED_BY_HUB = ['transport close', 'transport error'];

const mib = (bytes: number) => `${(bytes / MiB).toFixed(1)} MiB`;

/** A raw client of `sub` on the bot's namespace, joined, with its server socket once `session` came. */
async function rawClient(t: TestHub, sub: string): Promise<{ raw: RawEngine; server: ServerSocket }> {
  const raw = new RawEngine(t.url);
  const frame = await raw.join(Namespaces.client, { token: mintToken({ sub }), agentId: 'bot' });
  expect(frame.startsWith(`40${Namespaces.client},`)).toBe(true);
  const { sid } = JSON.parse(frame.slice(frame.indexOf(',') + 1)) as { sid: string };
  await raw.next((f) => f.includes('"session"'));
  return { raw, server: t.hub.io.of(Namespaces.client).sockets.get(sid)! };
}

/** The ids of the `message` events among raw frames, in order. */
function messageIds(frames: string[]): string[] {
  const prefix = `42${Namespaces.client},`;
  return frames.flatMap((f) => {
    if (!f.startsWith(prefix)) return [];
    const [event, payload] = JSON.parse(f.slice(prefix.length)) as [string, { id: string }];
    return event === 'message' ? [payload.id] : [];
  });
}

/** Resolves with the disconnect reason of a server socket. */
const disconnected = (server: ServerSocket) => new Promise<string>((resolve) => server.once('disconnect', resolve));

async function slowConsumerCloses(t: TestHub): Promise<number | undefined> {
  const found = (await t.hub.metrics.registry.getSingleMetricAsString('relay_slow_consumer_closes_total')).match(
    /relay_slow_consumer_closes_total\{namespace="\/ws\/client"\} (\d+)/,
  );
  return found ? Number(found[1]) : undefined;
}

describe('a client that stops reading', () => {
  let t: TestHub;
  const logLines: string[] = [];
  beforeAll(async () => {
    t = await startHub({ LOG_LEVEL: 'warn' }, { logLines });
  });
  afterAll(() => t.close());

  it('is closed past MAX_SOCKET_BUFFER_BYTES while the bot keeps being acked, and recovers what it missed from the log', async () => {
    const agent = await t.agent('bot');
    const { raw, server } = await rawClient(t, 'slow');
    // The log of the conversation holds HISTORY_MAX_MESSAGES (200) of these, in buffers grown to
    // their final size, before the measurement as after it.
    let lastSeen = '';
    for (let i = 0; i < 400; i++) lastSeen = (await agent.reply('slow', REPLY)).id;
    await raw.next((f) => f.includes(lastSeen));

    raw.pauseReading();
    const closed = disconnected(server);
    const sent: string[] = [];
    let closedAfter: number | undefined;
    void closed.then(() => (closedAfter = sent.length));
    const before = await retained();
    while (sent.length < MAX_REPLIES && (closedAfter === undefined || sent.length < closedAfter + AFTER_CLOSE)) {
      // reply() rejects unless the hub acked ok: every reply is logged, whether the client is there or not.
      sent.push((await agent.reply('slow', REPLY)).id);
    }
    const grew = growth(before, await retained());
    console.log(`paused reader: ${sent.length} replies of 60 KB sent, closed after ${closedAfter ?? 'never'}; ` + describeGrowth(grew));
    expect(closedAfter).toBeDefined();
    expect(CLOSED_BY_HUB).toContain(await closed);
    // What the hub holds is outside the V8 heap (socket buffers); RSS also carries heap reserved for garbage.
    expect(grew.external).toBeLessThan(16 * MiB);
    expect(grew.rss).toBeLessThan(64 * MiB);
    expect(await slowConsumerCloses(t)).toBe(1);
    const warned = logLines.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.msg === 'slow consumer closed');
    expect(warned).toMatchObject({ level: 40, clientId: 'slow', agentId: 'bot', namespace: Namespaces.client });

    // What reached the client's kernel before the close is still read; the rest comes from the log.
    raw.resumeReading();
    await raw.closed;
    const seen = messageIds(raw.frames);
    const last = seen[seen.length - 1];
    expect([lastSeen, ...sent]).toContain(last);
    const missed = sent.slice(sent.indexOf(last) + 1);
    expect(missed.length).toBeGreaterThan(AFTER_CLOSE);

    const again = clientSocket(t.url, { token: mintToken({ sub: 'slow' }), agentId: 'bot', lastMessageId: last });
    const replayed: string[] = [];
    again.on('message', (m: { id: string }) => replayed.push(m.id));
    const session = nextEvent<SessionInfo>(again, 'session');
    await connected(again);
    expect(await session).toMatchObject({ recovered: true });
    expect(replayed).toEqual(missed);
    again.disconnect();
    agent.close();
  });
});

/** One HTTP request of the polling transport; resolves with the response body. */
function poll(url: string, method: 'GET' | 'POST', query: string, body?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}/socket.io/?EIO=4&transport=polling${query}`, { method }, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => resolve(text));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('a polling client that stops polling', () => {
  it('is closed once its write buffer passes MAX_SOCKET_BUFFER_BYTES', async () => {
    const t = await startHub();
    try {
      const agent = await t.agent('bot');
      const open = await poll(t.url, 'GET', '');
      const { sid } = JSON.parse(open.slice(1)) as { sid: string };
      const joined = new Promise<ServerSocket>((resolve) => t.hub.io.of(Namespaces.client).once('connection', resolve));
      await poll(
        t.url,
        'POST',
        `&sid=${sid}`,
        `40${Namespaces.client},${JSON.stringify({ token: mintToken({ sub: 'poller' }), agentId: 'bot' })}`,
      );
      const closed = disconnected(await joined);
      // No GET comes to take them: the replies stay in Engine.IO's write buffer.
      let sent = 0;
      let closedAfter: number | undefined;
      void closed.then(() => (closedAfter = sent));
      while (closedAfter === undefined && sent < 100) {
        await agent.reply('poller', REPLY);
        sent++;
      }
      console.log(`paused poller: closed after ${closedAfter ?? 'never'} replies of 60 KB`);
      expect(await closed).toBe('forced close');
      expect(closedAfter).toBeLessThanOrEqual(Math.ceil((1.1 * MiB) / REPLY.length));
      expect(await slowConsumerCloses(t)).toBe(1);
      agent.close();
    } finally {
      await t.close();
    }
  });
});

describe('a client that stops reading while asking for history', () => {
  it('is closed once its history replies fill MAX_SOCKET_BUFFER_BYTES, instead of the hub queueing every page', async () => {
    // The history budget is off here, so the buffer bound alone is at work.
    const t = await startHub({ HISTORY_BYTES_PER_S: '0' });
    try {
      const agent = await t.agent('bot');
      for (let i = 0; i < 100; i++) await agent.reply('reader', REPLY);
      const { raw, server } = await rawClient(t, 'reader');
      raw.pauseReading();
      const closed = disconnected(server);
      let acks = 0;
      const allAcked = new Promise<void>((resolve) =>
        server.conn.on('packetCreate', (packet: { data?: unknown }) => {
          if (typeof packet.data === 'string' && packet.data.startsWith(`3${Namespaces.client},`) && ++acks === 60) resolve();
        }),
      );
      const before = await retained();
      raw.sendTogether(Array.from({ length: 60 }, (_, i) => `42${Namespaces.client},${i + 1}["history",{"limit":100}]`));
      const outcome = await Promise.race([closed, allAcked.then(() => 'all 60 pages queued')]);
      const grew = growth(before, await retained());
      console.log(`paused history requester: ${outcome} after ${acks} acks; ${describeGrowth(grew)}`);
      expect(CLOSED_BY_HUB).toContain(outcome);
      expect(grew.external).toBeLessThan(16 * MiB);
      expect(grew.rss).toBeLessThan(64 * MiB);
      agent.close();
      raw.close();
    } finally {
      await t.close();
    }
  });
});

describe('history pages', () => {
  let t: TestHub;
  const sent: string[] = [];
  beforeAll(async () => {
    // No refill during the test: the burst is all a socket gets.
    t = await startHub({ HISTORY_BYTES_PER_S: '1', HISTORY_BYTES_BURST: String(2 * MiB) });
    const agent = await t.agent('bot');
    for (let i = 0; i < 100; i++) sent.push((await agent.reply('pager', REPLY)).id);
    agent.close();
  });
  afterAll(() => t.close());

  it('are cut to the bytes one socket may queue, newest first, and page on from there; past the byte budget RATE_LIMITED', async () => {
    const client = await t.client('bot', { sub: 'pager' });
    const ask = (request: object) => client.timeout(10_000).emitWithAck('history', request) as Promise<HistoryAck>;
    const bytes = (messages: unknown[]) => Buffer.byteLength(JSON.stringify(messages));
    const served: string[] = [];
    let servedBytes = 0;
    let before: string | undefined;
    for (;;) {
      const page = await ask({ limit: 100, ...(before ? { before } : {}) });
      if (!page.ok) {
        expect(page.error.code).toBe('RATE_LIMITED');
        break;
      }
      // Each page: at most what one socket may queue, newest first, and more to come.
      expect(page.hasMore).toBe(true);
      expect(page.messages.length).toBeGreaterThan(0);
      expect(bytes(page.messages)).toBeLessThanOrEqual(MiB);
      served.unshift(...page.messages.map((m) => m.id));
      servedBytes += bytes(page.messages);
      before = page.messages[0].id;
    }
    // Neither a gap nor a repeat between the pages; the budget (2 MiB, no refill) spent, give or take a message.
    expect(served).toEqual(sent.slice(-served.length));
    expect(servedBytes).toBeGreaterThan(2 * MiB - 61_000);
    expect(servedBytes).toBeLessThan(2 * MiB + 61_000);
    expect(served.length).toBeLessThan(sent.length);
    // Refused history is no reason to end the session.
    expect(await client.timeout(5000).emitWithAck('history', {})).toMatchObject({ ok: false, error: { code: 'RATE_LIMITED' } });
    expect(client.connected).toBe(true);
    client.disconnect();
  });
});
