import type { Socket } from 'socket.io-client';
import type { AgentInboundMessage, ClientInboundMessage, DebugTrace, SendAck } from '../../src/protocol';
import type { RelayAgent } from '../../src/sdk/agent';
import { nextEvent, startHub, type TestHub } from '../helpers/hub';

let t: TestHub;
beforeAll(async () => {
  t = await startHub({ AGENT_RECONNECT_GRACE_MS: '300' });
});
afterAll(() => t.close());

/** Records every `message` and `debug` a socket receives. */
function recorder(socket: Socket) {
  const messages: ClientInboundMessage[] = [];
  const debug: DebugTrace[] = [];
  socket.on('message', (m: ClientInboundMessage) => messages.push(m));
  socket.on('debug', (d: DebugTrace) => debug.push(d));
  return { messages, debug };
}

function send(socket: Socket, payload: unknown): Promise<SendAck> {
  return socket.timeout(5000).emitWithAck('message', payload);
}

/**
 * Every socket in `sockets` has received a message with the marker text. Messages are delivered in
 * order per socket, so a final marker sent to everyone proves earlier messages were not held back.
 */
async function flush(agent: RelayAgent, sockets: Socket[]): Promise<void> {
  const marker = `flush-${Math.random()}`;
  const arrived = sockets.map(
    (s) => new Promise<void>((resolve) => s.on('message', (m: ClientInboundMessage) => m.text === marker && resolve())),
  );
  await agent.reply('*', marker);
  await Promise.all(arrived);
}

describe('routing', () => {
  it('isolates bots: clients of A never receive B’s replies', async () => {
    const agentA = await t.agent('iso-a');
    const agentB = await t.agent('iso-b');
    const onA = await t.client('iso-a', { sub: 'same-user' });
    const onB = await t.client('iso-b', { sub: 'same-user' });
    const a = recorder(onA);
    const b = recorder(onB);

    await agentB.reply('same-user', 'for B only');
    await agentB.reply('*', 'B broadcast');
    await flush(agentA, [onA]);
    await flush(agentB, [onB]);

    expect(a.messages.map((m) => m.text)).toEqual([expect.stringMatching(/^flush-/)]);
    expect(b.messages.map((m) => m.text).slice(0, 2)).toEqual(['for B only', 'B broadcast']);
    expect(b.messages[0]).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
      ts: expect.stringMatching(/Z$/),
      agentId: 'iso-b',
      author: 'agent',
      text: 'for B only',
    });
  });

  it('delivers a reply to every tab of the client and nobody else; * reaches all clients of the bot', async () => {
    const agent = await t.agent('tabs');
    const tab1 = await t.client('tabs', { sub: 'x' });
    const tab2 = await t.client('tabs', { sub: 'x' });
    const other = await t.client('tabs', { sub: 'y' });
    const admin = await t.client('tabs', { sub: 'boss', roles: ['ADMIN'] });
    const [r1, r2, ro, ra] = [tab1, tab2, other, admin].map(recorder);

    const ack = await agent.reply('x', 'hello x', { card: { title: 't' } }, 'some-client-message');
    await agent.reply('*', 'everyone');
    await flush(agent, [tab1, tab2, other, admin]);

    const expected = {
      id: ack.id,
      ts: ack.ts,
      agentId: 'tabs',
      author: 'agent',
      text: 'hello x',
      data: { card: { title: 't' } },
      replyTo: 'some-client-message',
    };
    expect(r1.messages[0]).toEqual(expected);
    expect(r2.messages[0]).toEqual(expected);
    expect(ro.messages.map((m) => m.text)).toEqual(['everyone', expect.stringMatching(/^flush-/)]);
    expect(ra.messages.map((m) => m.text)).toEqual(['everyone', expect.stringMatching(/^flush-/)]);
  });

  it('addresses all admins of the bot with to: "admin"', async () => {
    const agent = await t.agent('admins');
    const admin1 = await t.client('admins', { sub: 'a1', roles: ['ADMIN'] });
    const admin2 = await t.client('admins', { sub: 'a2', roles: ['ADMIN'] });
    const user = await t.client('admins', { sub: 'u' });
    const got = [admin1, admin2, user].map(recorder);
    await agent.reply('admin', 'for admins');
    await flush(agent, [admin1, admin2, user]);
    expect(got.map((g) => g.messages[0].text)).toEqual(['for admins', 'for admins', expect.stringMatching(/^flush-/)]);
  });

  it('stamps from with the verified identity, whatever the payload claims', async () => {
    const agent = await t.agent('from');
    const inbox: AgentInboundMessage[] = [];
    agent.onMessage((m) => void inbox.push(m));
    const user = await t.client('from', { sub: 'mallory' });
    const admin = await t.client('from', { sub: 'root', roles: ['ADMIN'] });

    const ack = await send(user, { clientMessageId: 'c1', text: 'hi', from: 'admin', agentId: 'other', id: 'forged' });
    await send(admin, { clientMessageId: 'c1', text: 'as admin' });

    expect(ack).toEqual({ ok: true, id: expect.any(String), ts: expect.any(String) });
    expect(inbox).toEqual([
      { id: (ack as { id: string }).id, ts: (ack as { ts: string }).ts, agentId: 'from', from: 'mallory', text: 'hi' },
      expect.objectContaining({ from: 'admin', text: 'as admin' }),
    ]);
  });

  it('sends the debug stream to admin sockets of that bot only', async () => {
    const agent = await t.agent('dbg');
    const otherAgent = await t.agent('dbg-other');
    const admin = await t.client('dbg', { sub: 'root', roles: ['ADMIN'] });
    const otherBotAdmin = await t.client('dbg-other', { sub: 'root2', roles: ['ADMIN'] });
    const user = await t.client('dbg', { sub: 'u' });
    const [ra, ro, ru] = [admin, otherBotAdmin, user].map(recorder);

    const traced = nextEvent<DebugTrace>(admin, 'debug');
    await agent.debug({ prompt: 'You are…', tokens: 12 }, 'u');
    expect(await traced).toEqual({ agentId: 'dbg', clientId: 'u', trace: { prompt: 'You are…', tokens: 12 }, ts: expect.any(String) });
    await otherAgent.reply('*', 'sync');
    await flush(agent, [admin, user]);
    await flush(otherAgent, [otherBotAdmin]);
    expect(ra.debug).toHaveLength(1);
    expect(ro.debug).toHaveLength(0);
    expect(ru.debug).toHaveLength(0);
  });

  it('acks a retried clientMessageId with the original id and delivers it once', async () => {
    const agent = await t.agent('dedupe');
    const inbox: AgentInboundMessage[] = [];
    agent.onMessage((m) => void inbox.push(m));
    const client = await t.client('dedupe', { sub: 'retrier' });

    const first = await send(client, { clientMessageId: 'retry-me', text: 'once' });
    const second = await send(client, { clientMessageId: 'retry-me', text: 'once' });
    const otherTab = await t.client('dedupe', { sub: 'retrier' });
    const third = await send(otherTab, { clientMessageId: 'retry-me', text: 'once' });
    const someoneElse = await t.client('dedupe', { sub: 'another' });
    const fourth = await send(someoneElse, { clientMessageId: 'retry-me', text: 'mine' });

    expect(first.ok).toBe(true);
    expect(second).toEqual(first);
    expect(third).toEqual(first);
    expect(fourth.ok && fourth.id).not.toBe(first.ok && first.id);
    expect(inbox.map((m) => m.text)).toEqual(['once', 'mine']);
  });

  it('acks AGENT_OFFLINE when no runtime serves the bot, and TIMEOUT when the runtime never acks', async () => {
    const client = await t.client('nobody-home', { sub: 'u' });
    expect(await send(client, { clientMessageId: 'm', text: 'hello?' })).toEqual({
      ok: false,
      error: { code: 'AGENT_OFFLINE', message: expect.any(String) },
    });

    const h = await startHub({ AGENT_ACK_TIMEOUT_MS: '200' });
    try {
      const { agentSocket, connected } = await import('../helpers/hub');
      const { TEST_AGENT_KEY } = await import('../helpers/tokens');
      const silent = agentSocket(h.url, { apiKey: TEST_AGENT_KEY, agentId: 'silent' });
      const received = new Promise((resolve) => silent.on('message', resolve)); // receives, never acks
      await connected(silent);
      const c = await h.client('silent', { sub: 'u' });
      const ack = await send(c, { clientMessageId: 'm', text: 'anyone?' });
      await received;
      expect(ack).toEqual({ ok: false, error: { code: 'TIMEOUT', message: expect.any(String) } });
      silent.disconnect();
    } finally {
      await h.close();
    }
  });

  it('redelivers a retry of an unacknowledged message with the same id', async () => {
    const h = await startHub({ AGENT_ACK_TIMEOUT_MS: '300' });
    try {
      const { agentSocket, connected } = await import('../helpers/hub');
      const { TEST_AGENT_KEY } = await import('../helpers/tokens');
      const flaky = agentSocket(h.url, { apiKey: TEST_AGENT_KEY, agentId: 'flaky' });
      const seen: AgentInboundMessage[] = [];
      // Loses the first delivery's ack, acks the second.
      flaky.on('message', (m: AgentInboundMessage, done: (r: { ok: boolean }) => void) => {
        seen.push(m);
        if (seen.length > 1) done({ ok: true });
      });
      await connected(flaky);
      const c = await h.client('flaky', { sub: 'u' });
      const payload = { clientMessageId: 'again', text: 'are you there?' };
      expect(await send(c, payload)).toMatchObject({ ok: false, error: { code: 'TIMEOUT' } });
      const retry = await send(c, payload);
      expect(retry).toEqual({ ok: true, id: seen[0].id, ts: seen[0].ts });
      expect(seen.map((m) => m.id)).toEqual([seen[0].id, seen[0].id]);
      expect(await send(c, payload)).toEqual(retry); // now delivered: acked from the record
      expect(seen).toHaveLength(2);
      flaky.disconnect();
    } finally {
      await h.close();
    }
  });

  it('tells clients when the bot comes online and goes offline', async () => {
    const client = await t.client('status', { sub: 'u' });
    const online = nextEvent(client, 'agent:status');
    const agent = await t.agent('status');
    expect(await online).toEqual({ agentId: 'status', online: true });
    const offline = nextEvent(client, 'agent:status');
    agent.close();
    expect(await offline).toEqual({ agentId: 'status', online: false });
  });
});
