import { request } from 'node:http';
import type { Socket as ServerSocket } from 'socket.io';
import { Namespaces, type HistoryAck, type SessionInfo } from '../../src/protocol';
import type { Socket as NetSocket } from 'node:net';
import type { Socket as ClientSocket } from 'socket.io-client';
import { transportWebSocket } from '../../src/internals/engine-io.internals';
import { waitFor } from '../helpers/wait';
import { agentSocket, clientSocket, connected, nextEvent, startHub, type TestHub } from '../helpers/hub';
import { RawEngine } from '../helpers/raw-engine';
import { mintToken, TEST_AGENT_KEY } from '../helpers/tokens';
import { collectGarbage } from '../helpers/gc';

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
  await collectGarbage();
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

async function slowConsumerCloses(t: TestHub, namespace: string = Namespaces.client): Promise<number | undefined> {
  const found = (await t.hub.metrics.registry.getSingleMetricAsString('relay_slow_consumer_closes_total')).match(
    new RegExp(`relay_slow_consumer_closes_total\\{namespace="${namespace}"\\} (\\d+)`),
  );
  return found ? Number(found[1]) : undefined;
}

describe('a client that stops reading', () => {
  let t: TestHub;
  const logLines: string[] = [];
  beforeAll(async () => {
    // All it missed in one replay, whatever it weighs: replay-bytes.test.ts has the bound in bytes.
    t = await startHub({ LOG_LEVEL: 'warn', REPLAY_MAX_BYTES: String(16 * MiB) }, { logLines });
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

/**
 * An agent runtime (a plain Socket.IO client that acks every message) whose TCP socket can stop
 * being read, as {@link RawEngine.pauseReading} does for a raw client.
 */
async function pausableRuntime(t: TestHub, agentId: string) {
  const socket: ClientSocket = agentSocket(t.url, { apiKey: TEST_AGENT_KEY, agentId });
  const received: string[] = [];
  socket.on('message', (m: { text: string }, ack: (a: unknown) => void) => {
    received.push(m.text.slice(0, m.text.indexOf(' ')));
    ack({ ok: true });
  });
  await connected(socket);
  const tcp = (socket.io.engine.transport as unknown as { ws: { _socket: NetSocket } }).ws._socket;
  const resume = tcp.resume.bind(tcp);
  const server = [...t.hub.io.of(Namespaces.agent).sockets.values()].find((s) => (s.data as { agentId: string }).agentId === agentId)!;
  let handed = 0;
  server.onAnyOutgoing((event: string) => void (event === 'message' && handed++));
  return {
    socket,
    received,
    server,
    /** Messages the hub wrote to this runtime's socket. */
    handed: () => handed,
    /** Bytes the hub holds queued for this runtime. */
    queued: () => transportWebSocket(server.conn.transport)?.bufferedAmount ?? 0,
    pause() {
      tcp.resume = () => tcp;
      tcp.pause();
    },
    resume() {
      tcp.resume = resume;
      tcp.resume();
    },
  };
}

/** `count` messages of 60 KB from `clients` in turn, numbered from `from`; resolves with each ack's code (`ok`). */
function burst(clients: ClientSocket[], count: number, from = 0): Promise<string[]> {
  return Promise.all(
    Array.from({ length: count }, (_, n) => n + from).map((i) =>
      clients[i % clients.length]
        .timeout(60_000)
        .emitWithAck('message', { clientMessageId: `burst-${i}`, text: `m${i} ${REPLY}` })
        .then(
          (ack: { ok: boolean; error?: { code: string } }) => (ack.ok ? 'ok' : ack.error!.code),
          () => 'no ack',
        ),
    ),
  );
}

describe('an agent runtime', () => {
  let t: TestHub;
  const logLines: string[] = [];
  beforeAll(async () => {
    t = await startHub(
      {
        // The clients' bound low, so that a burst for the runtime passes it many times over.
        MAX_SOCKET_BUFFER_BYTES: String(256 * 1024),
        MAX_AGENT_SOCKET_BUFFER_BYTES: String(4 * MiB),
        // Deliveries to a runtime that is gone end at once instead of waiting for it to return.
        AGENT_RECONNECT_GRACE_MS: '0',
        MESSAGE_RATE_PER_S: '0',
        USER_MESSAGE_RATE_PER_S: '100000',
        USER_MESSAGE_RATE_BURST: '100000',
        AGENT_ACK_TIMEOUT_MS: '60000',
        LOG_LEVEL: 'warn',
      },
      { logLines },
    );
  });
  afterAll(() => t.close());

  it("is not closed for a burst of its users' messages past MAX_SOCKET_BUFFER_BYTES, under MAX_AGENT_SOCKET_BUFFER_BYTES: every message delivered and acked ok", async () => {
    const runtime = await pausableRuntime(t, 'bulk-bot');
    const clients = await Promise.all(Array.from({ length: 20 }, (_, i) => t.client('bulk-bot', { sub: `bulk-${i}` })));
    // It stops reading while the burst comes, so the burst waits in the hub for it.
    runtime.pause();
    const waves: Promise<string[]>[] = [];
    // Wave after wave, each written to the runtime's socket before the next: the hub checks what is
    // still queued whenever it writes to it again.
    let sent = 0;
    for (; runtime.queued() <= 1 * MiB && runtime.server.connected && sent < 400; sent += clients.length) {
      waves.push(burst(clients, clients.length, sent));
      const wave = sent + clients.length;
      await waitFor(() => runtime.handed() >= wave || !runtime.server.connected, 10_000, 'the wave written to the runtime');
    }
    // Four times the clients' bound, and one more wave written on top of it: the check ran on it.
    expect(runtime.queued()).toBeGreaterThan(1 * MiB);
    waves.push(burst(clients, clients.length, sent));
    await waitFor(() => runtime.handed() >= sent + clients.length || !runtime.server.connected, 10_000, 'one more wave');
    expect(runtime.server.connected).toBe(true);
    runtime.resume();
    const acks = (await Promise.all(waves)).flat();
    expect(acks.filter((code) => code !== 'ok')).toEqual([]);
    expect(new Set(runtime.received).size).toBe(acks.length);
    expect(await slowConsumerCloses(t, Namespaces.agent)).toBeUndefined();
    for (const c of clients) c.disconnect();
    runtime.socket.disconnect();
  });

  it('that stops reading is closed past MAX_AGENT_SOCKET_BUFFER_BYTES; the messages it did not ack get a clear code', async () => {
    const runtime = await pausableRuntime(t, 'stuck-bot');
    const clients = await Promise.all(Array.from({ length: 20 }, (_, i) => t.client('stuck-bot', { sub: `stuck-${i}` })));
    runtime.pause();
    const closed = disconnected(runtime.server);
    // Wave after wave: the hub checks what is still queued when it next writes to the runtime.
    const waves: Promise<string[]>[] = [];
    for (let sent = 0; runtime.server.connected && sent < 1000; sent += clients.length) {
      waves.push(burst(clients, clients.length, sent));
      const wave = sent + clients.length;
      await waitFor(() => runtime.handed() >= wave || !runtime.server.connected, 10_000, 'the wave written to the runtime');
    }
    expect(CLOSED_BY_HUB).toContain(await closed);
    expect(await slowConsumerCloses(t, Namespaces.agent)).toBe(1);
    const warned = logLines.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.msg === 'slow consumer closed');
    expect(warned).toMatchObject({ level: 40, agentId: 'stuck-bot', namespace: Namespaces.agent, maxSocketBufferBytes: 4 * MiB });
    // None was acked by the runtime; with no other runtime of the bot, each gets AGENT_OFFLINE.
    expect([...new Set((await Promise.all(waves)).flat())]).toEqual(['AGENT_OFFLINE']);
    for (const c of clients) c.disconnect();
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
