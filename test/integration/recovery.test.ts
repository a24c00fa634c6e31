import type { Socket } from 'socket.io-client';
import type { ClientInboundMessage, HistoryAck, SendAck, SessionInfo } from '../../src/protocol';
import { clientSocket, connected, startHub, type TestHub } from '../helpers/hub';
import { mintToken } from '../helpers/tokens';

let t: TestHub;
beforeAll(async () => {
  // Bots here publish as fast as they can while replays run: no delivery budget in the way.
  t = await startHub({ RECOVERY_MAX_MESSAGES: '20', HISTORY_MAX_MESSAGES: '50', AGENT_DELIVERY_RATE_PER_S: '0' });
});
afterAll(() => t.close());

/** Every event a socket receives, in arrival order, from before its handshake completes. */
interface Recording {
  socket: Socket;
  events: { event: string; payload: unknown }[];
  messages(): ClientInboundMessage[];
  session(): Promise<SessionInfo>;
}

const opened: Socket[] = [];
afterEach(() => {
  for (const s of opened.splice(0)) s.disconnect();
});

/** Connects a client of `agentId` as `sub`, recording everything from the first packet on. */
async function open(agentId: string, sub: string, lastMessageId?: unknown): Promise<Recording> {
  const auth: Record<string, unknown> = { token: mintToken({ sub }), agentId };
  if (lastMessageId !== undefined) auth.lastMessageId = lastMessageId;
  const socket = clientSocket(t.url, auth);
  opened.push(socket);
  const events: Recording['events'] = [];
  socket.onAny((event: string, payload: unknown) => events.push({ event, payload }));
  const session = new Promise<SessionInfo>((resolve) => socket.once('session', resolve));
  await connected(socket);
  return {
    socket,
    events,
    messages: () => events.filter((e) => e.event === 'message').map((e) => e.payload as ClientInboundMessage),
    session: () => session,
  };
}

/** Resolves once the recording holds a message with `id` (it may already). */
function arrival(rec: Recording, id: string): Promise<void> {
  return new Promise<void>((resolve) => {
    if (rec.messages().some((m) => m.id === id)) resolve();
    else rec.socket.on('message', (m: ClientInboundMessage) => m.id === id && resolve());
  });
}

const texts = (messages: ClientInboundMessage[]) => messages.map((m) => m.text);
const send = (socket: Socket, payload: unknown): Promise<SendAck> => socket.timeout(5000).emitWithAck('message', payload);
const history = (socket: Socket, payload: unknown): Promise<HistoryAck> => socket.timeout(5000).emitWithAck('history', payload);

describe('recovery with lastMessageId', () => {
  it('replays what the client missed, in order, once, before session (recovered: true), then live traffic', async () => {
    const agent = await t.agent('rec-a');
    const first = await open('rec-a', 'u1');
    await first.session();
    const seen = await agent.reply('u1', 'seen');
    await arrival(first, seen.id);
    first.socket.disconnect();

    const missed = [];
    for (const text of ['m1', 'm2', 'm3']) missed.push(await agent.reply('u1', text));
    await agent.reply('someone-else', 'not yours');
    await agent.reply('*', 'to everyone');

    const back = await open('rec-a', 'u1', seen.id);
    const session = await back.session();
    expect(session).toMatchObject({ clientId: 'u1', agentId: 'rec-a', agentOnline: true, recovered: true });
    const before = back.events.slice(
      0,
      back.events.findIndex((e) => e.event === 'session'),
    );
    expect(before.map((e) => (e.payload as ClientInboundMessage).text)).toEqual(['m1', 'm2', 'm3', 'to everyone']);
    expect((before[0].payload as ClientInboundMessage).id).toBe(missed[0].id);
    expect(before[0].payload).toEqual({ id: missed[0].id, ts: missed[0].ts, agentId: 'rec-a', author: 'agent', text: 'm1' });

    const live = await agent.reply('u1', 'live');
    await arrival(back, live.id);
    expect(texts(back.messages())).toEqual(['m1', 'm2', 'm3', 'to everyone', 'live']);
  });

  it("replays the user's own messages too, with author user and their clientMessageId", async () => {
    const agent = await t.agent('rec-b');
    agent.onMessage(() => {});
    const tab = await open('rec-b', 'u2');
    await tab.session();
    const seen = await agent.reply('u2', 'hello');
    const sent = await send(tab.socket, { clientMessageId: 'cm-1', text: 'from another device' });
    expect(sent.ok).toBe(true);

    const other = await open('rec-b', 'u2', seen.id);
    expect((await other.session()).recovered).toBe(true);
    expect(other.messages()).toEqual([
      {
        id: (sent as { id: string }).id,
        ts: (sent as { ts: string }).ts,
        agentId: 'rec-b',
        author: 'user',
        text: 'from another device',
        clientMessageId: 'cm-1',
      },
    ]);
  });

  it('replays nothing and says recovered: false for an unknown, malformed or too old id; no field without one', async () => {
    const agent = await t.agent('rec-c');
    const old = await agent.reply('u3', 'old');
    for (let i = 0; i < 21; i++) await agent.reply('u3', `r${i}`);

    for (const id of ['0190a000-0000-7000-8000-000000000000', 42, '', 'x'.repeat(65), old.id]) {
      const c = await open('rec-c', 'u3', id);
      expect((await c.session()).recovered).toBe(false);
      expect(c.messages()).toEqual([]);
      c.socket.disconnect();
    }
    const plain = await open('rec-c', 'u3');
    expect(await plain.session()).not.toHaveProperty('recovered');
  });

  it('neither loses nor doubles nor reorders replies published while the replay is under way', async () => {
    const agent = await t.agent('rec-d');
    const acks: string[] = [(await agent.reply('u4', 'start')).id];
    // Each client reconnects from the newest id acknowledged so far, and five replies are published
    // (logged and emitted in the order they arrive) while its handshake reads and replays the log.
    // Paced by the reconnects, not by the clock: however slow the handshake, at most five replies
    // follow its lastMessageId, within RECOVERY_MAX_MESSAGES (20).
    const clients: { rec: Recording; from: string }[] = [];
    for (let i = 0; i < 25; i++) {
      const from = acks[acks.length - 1];
      const rec = open('rec-d', 'u4', from);
      const batch = await Promise.all([0, 1, 2, 3, 4].map((k) => agent.reply('u4', `p${i * 5 + k}`)));
      acks.push(...batch.map((a) => a.id));
      clients.push({ rec: await rec, from });
      await clients[i].rec.session();
    }
    for (let i = 0; i < 5; i++) acks.push((await agent.reply('u4', `tail${i}`)).id);
    const last = acks[acks.length - 1];
    for (const { rec, from } of clients) {
      expect((await rec.session()).recovered).toBe(true);
      await arrival(rec, last);
      expect(rec.messages().map((m) => m.id)).toEqual(acks.slice(acks.indexOf(from) + 1));
    }
  });
});

describe('history event', () => {
  it('pages backwards, oldest first within a page, with hasMore', async () => {
    const agent = await t.agent('hist-a');
    const c = await open('hist-a', 'h1');
    await c.session();
    for (let i = 0; i < 5; i++) await agent.reply('h1', `h${i}`);
    const newest = await history(c.socket, { limit: 2 });
    expect(newest).toMatchObject({ ok: true, hasMore: true });
    expect(texts((newest as { messages: ClientInboundMessage[] }).messages)).toEqual(['h3', 'h4']);
    const older = (await history(c.socket, { before: (newest as { messages: ClientInboundMessage[] }).messages[0].id, limit: 2 })) as {
      messages: ClientInboundMessage[];
      hasMore: boolean;
    };
    expect([texts(older.messages), older.hasMore]).toEqual([['h1', 'h2'], true]);
    const all = (await history(c.socket, {})) as { messages: ClientInboundMessage[]; hasMore: boolean };
    expect([texts(all.messages), all.hasMore]).toEqual([['h0', 'h1', 'h2', 'h3', 'h4'], false]);
  });

  it('refuses a bad request with INVALID_PAYLOAD and keeps the session', async () => {
    const c = await open('hist-b', 'h2');
    await c.session();
    for (const bad of [{ limit: 0 }, { limit: 101 }, { limit: 1.5 }, { before: 7 }, 'x', null]) {
      expect(await history(c.socket, bad)).toMatchObject({ ok: false, error: { code: 'INVALID_PAYLOAD' } });
    }
    expect(await history(c.socket, { limit: 100 })).toEqual({ ok: true, messages: [], hasMore: false });
  });
});

describe('multi-tab echo', () => {
  it("shows an accepted message on the sender's other tabs, not on the sending tab nor other users", async () => {
    const agent = await t.agent('echo');
    const got: string[] = [];
    agent.onMessage((m) => void got.push(m.text));
    const [tab1, tab2, stranger] = await Promise.all([open('echo', 'e1'), open('echo', 'e1'), open('echo', 'e2')]);
    await Promise.all([tab1.session(), tab2.session(), stranger.session()]);
    const echoed = new Promise<ClientInboundMessage>((resolve) => tab2.socket.once('message', resolve));
    const ack = (await send(tab1.socket, { clientMessageId: 'tab-1', text: 'typed in tab 1', data: { k: 1 } })) as {
      id: string;
      ts: string;
    };
    expect(await echoed).toEqual({
      id: ack.id,
      ts: ack.ts,
      agentId: 'echo',
      author: 'user',
      text: 'typed in tab 1',
      data: { k: 1 },
      clientMessageId: 'tab-1',
    });
    // A retry is not echoed again.
    await send(tab1.socket, { clientMessageId: 'tab-1', text: 'typed in tab 1', data: { k: 1 } });
    const marker = await agent.reply('*', 'marker');
    for (const c of [tab1, tab2, stranger]) await arrival(c, marker.id);
    expect(texts(tab1.messages())).toEqual(['marker']);
    expect(texts(tab2.messages())).toEqual(['typed in tab 1', 'marker']);
    expect(texts(stranger.messages())).toEqual(['marker']);
    expect(got).toEqual(['typed in tab 1']);
  });
});

describe('HISTORY_ENABLED=false', () => {
  it('relays as before, recovers nothing and serves empty history', async () => {
    const off = await startHub({ HISTORY_ENABLED: 'false' });
    try {
      const agent = await off.agent('off');
      const seen = await agent.reply('o1', 'not logged');
      expect(seen.id).toBeDefined();
      const socket = clientSocket(off.url, { token: mintToken({ sub: 'o1' }), agentId: 'off', lastMessageId: seen.id });
      const session = new Promise<SessionInfo>((resolve) => socket.once('session', resolve));
      await connected(socket);
      expect((await session).recovered).toBe(false);
      expect(await history(socket, {})).toEqual({ ok: true, messages: [], hasMore: false });
      socket.disconnect();
    } finally {
      await off.close();
    }
  });
});

describe('metrics', () => {
  it('counts log appends, replays (recovered or not), replayed messages and history reads', async () => {
    const agent = await t.agent('metrics-bot');
    const seen = await agent.reply('mu', 'one');
    await agent.reply('mu', 'two');
    const recovered = await open('metrics-bot', 'mu', seen.id);
    await recovered.session();
    const lost = await open('metrics-bot', 'mu', '0190a000-0000-7000-8000-000000000000');
    await lost.session();
    await history(recovered.socket, {});
    const text = await t.hub.metrics.registry.metrics();
    const value = (line: string) => Number(new RegExp(`^${line.replace(/[{}]/g, '\\$&')} (\\d+)`, 'm').exec(text)?.[1] ?? NaN);
    expect(value('relay_log_appends_total{author="agent",result="ok"}')).toBeGreaterThanOrEqual(2);
    expect(value('relay_replays_total{recovered="true"}')).toBeGreaterThanOrEqual(1);
    expect(value('relay_replays_total{recovered="false"}')).toBeGreaterThanOrEqual(1);
    expect(value('relay_replayed_messages_total')).toBeGreaterThanOrEqual(1);
    expect(value('relay_history_reads_total{source="socket"}')).toBeGreaterThanOrEqual(1);
  });
});
