import { io as connect, type Socket } from 'socket.io-client';
import {
  Namespaces,
  type AgentApproval,
  type AgentInboundMessage,
  type ApprovalAck,
  type ClientInboundMessage,
  type ConversationControl,
  type MessagePartEvent,
  type ToolPart,
} from '../../src/protocol';
import { isConversationHeld, type RelayAgent } from '../../src/sdk/agent';
import { collect, waitFor } from '../helpers/cluster';
import { agentSocket, clientSocket, connected, nextEvent, refusal, startHub, type TestHub } from '../helpers/hub';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { mintToken, TEST_ADMIN_JWT_SECRET, TEST_AGENT_KEY } from '../helpers/tokens';
import { adminToken, api, bearerClient } from './rest-client.helper';

/** An operator token (role OPERATOR, signed with the admin secret) for `agentIds`. */
function operatorToken(sub: string, agentIds: string[], name?: string): string {
  return mintToken({ sub, roles: ['OPERATOR'], agentIds, ...(name ? { name } : {}) }, TEST_ADMIN_JWT_SECRET);
}

/** A console socket on /ws/operator, connected. */
async function consoleSocket(url: string, token: string, agentId: string): Promise<Socket> {
  const socket = connect(`${url}${Namespaces.operator}`, {
    transports: ['websocket'],
    forceNew: true,
    reconnection: false,
    auth: { token, agentId },
  });
  await nextEvent(socket, 'operator:session');
  return socket;
}

/** Resolves with the first `event` payload on `socket` that `match` accepts. */
function eventWhere<T>(
  socket: { on(e: string, f: (p: T) => void): unknown; off(e: string, f: (p: T) => void): unknown },
  event: string,
  match: (p: T) => boolean,
): Promise<T> {
  return new Promise((resolve) => {
    const on = (payload: T) => {
      if (!match(payload)) return;
      socket.off(event, on);
      resolve(payload);
    };
    socket.on(event, on);
  });
}

describe('human handoff on two replicas over Redis (docs/handoff.md)', () => {
  let redis: TestRedis;
  let a: TestHub;
  let b: TestHub;
  const sockets: Socket[] = [];
  beforeAll(async () => {
    redis = await startRedis();
    a = await startHub({ REDIS_URL: redis.url });
    b = await startHub({ REDIS_URL: redis.url });
  });
  afterAll(async () => {
    for (const s of sockets) s.disconnect();
    await a?.close();
    await b?.close();
    await redis?.close();
  });

  it('bot asks → waiting → taken over on the other replica → bot refused, user observed → handed back → bot answers', async () => {
    const bot: RelayAgent = await a.agent('shop');
    const seen: AgentInboundMessage[] = [];
    bot.onMessage((m) => void seen.push(m));
    const botControls: ConversationControl[] = [];
    bot.onControl((c) => void botControls.push(c));
    const tab1 = await a.client('shop', { sub: 'u1' });
    const tab2 = await b.client('shop', { sub: 'u1' });
    const ops = await consoleSocket(b.url, operatorToken('ana', ['shop'], 'Ana'), 'shop');
    sockets.push(ops);

    const waiting = eventWhere<ConversationControl>(ops, 'conversation:control', (c) => c.control === 'waiting');
    await bot.handoff('u1', { reason: 'refund', summary: 'wants money back' });
    expect(await waiting).toMatchObject({
      agentId: 'shop',
      clientId: 'u1',
      control: 'waiting',
      reason: 'refund',
      summary: 'wants money back',
    });

    const list = await api.getConversations({
      client: bearerClient(b.url, operatorToken('ana', ['shop'], 'Ana')),
      path: { agentId: 'shop' },
    });
    expect(list.data!.data[0]).toMatchObject({
      clientId: 'u1',
      control: 'waiting',
      reason: 'refund',
      summary: 'wants money back',
      online: true,
    });

    const joined = [tab1, tab2].map((t) => nextEvent(t, 'conversation:control'));
    const botToldHuman = new Promise<void>((resolve) =>
      bot.onControl((c) => void (botControls.push(c), c.control === 'human' && resolve())),
    );
    const taken = await api.takeOverConversation({
      client: bearerClient(b.url, operatorToken('ana', ['shop'], 'Ana')),
      path: { agentId: 'shop', clientId: 'u1' },
    });
    expect(taken.data!.data).toMatchObject({ control: 'human', operator: { name: 'Ana' } });
    for (const j of await Promise.all(joined)) expect(j).toEqual({ agentId: 'shop', control: 'human', operator: { name: 'Ana' } });
    await botToldHuman;

    // The bot's reply and stream are refused, and no tab gets anything.
    const tabMessages = [tab1, tab2].map((t) => collect<ClientInboundMessage>(t, 'message'));
    const tabStarts = [tab1, tab2].map((t) => collect(t, 'message:start'));
    const refused = await bot.reply('u1', 'I can help!').catch((e: unknown) => e);
    expect(isConversationHeld(refused)).toBe(true);
    const streamRefused = await bot.stream('u1').catch((e: unknown) => e);
    expect(isConversationHeld(streamRefused)).toBe(true);

    // The user's message reaches the operator (console on the other replica) and the bot, observed.
    const toOperator = eventWhere<{ clientId: string; message: ClientInboundMessage }>(
      ops,
      'conversation:message',
      (m) => m.message.author === 'user',
    );
    const ack = (await tab1.emitWithAck('message', { clientMessageId: 'c1', text: 'hello?' })) as { ok: boolean };
    expect(ack.ok).toBe(true);
    expect(await toOperator).toMatchObject({ clientId: 'u1', message: { author: 'user', text: 'hello?' } });
    await waitFor(() => seen.length === 1, 5000, 'the observed message');
    expect(seen[0]).toMatchObject({ from: 'u1', text: 'hello?', observed: true });

    // The operator's message reaches every tab as author operator with the name.
    const opMessages = [tab1, tab2].map((t) => eventWhere<ClientInboundMessage>(t, 'message', (m) => m.author === 'operator'));
    const sent = await api.createOperatorMessage({
      client: bearerClient(a.url, operatorToken('ana', ['shop'], 'Ana')),
      path: { agentId: 'shop', clientId: 'u1' },
      body: { text: 'Hi, Ana here.' },
    });
    expect(sent.response!.status).toBe(201);
    for (const m of await Promise.all(opMessages))
      expect(m).toMatchObject({ author: 'operator', text: 'Hi, Ana here.', operator: { name: 'Ana' } });
    // Nothing of the bot reached a tab meanwhile.
    for (const list of tabMessages) expect(list.filter((m) => m.author === 'agent')).toEqual([]);
    for (const list of tabStarts) expect(list).toEqual([]);

    // Hand back: the tabs are told, the bot answers again, its messages are no longer observed.
    const back = [tab1, tab2].map((t) => eventWhere<{ control: string }>(t, 'conversation:control', (c) => c.control === 'bot'));
    const released = await api.releaseConversation({
      client: bearerClient(a.url, operatorToken('ana', ['shop'], 'Ana')),
      path: { agentId: 'shop', clientId: 'u1' },
    });
    expect(released.data!.data.control).toBe('bot');
    for (const c of await Promise.all(back)) expect(c).toEqual({ agentId: 'shop', control: 'bot' });
    const answer = [tab1, tab2].map((t) => eventWhere<ClientInboundMessage>(t, 'message', (m) => m.author === 'agent'));
    await bot.reply('u1', 'Back to me.');
    for (const m of await Promise.all(answer)) expect(m.text).toBe('Back to me.');
    await tab2.emitWithAck('message', { clientMessageId: 'c2', text: 'thanks' });
    await waitFor(() => seen.length === 2, 5000, 'the second message');
    expect(seen[1].observed).toBeUndefined();

    // History shows the changes of control, in order.
    const history = (await tab1.emitWithAck('history', {})) as { messages: ClientInboundMessage[] };
    expect(history.messages.filter((m) => m.author === 'system').map((m) => [m.control, m.text])).toEqual([
      ['waiting', 'Waiting for a person'],
      ['human', 'Ana joined the conversation'],
      ['bot', "Ana left; you're back with the assistant"],
    ]);
  });

  it('of two operators taking over at once on two replicas, exactly one wins and the other gets 409 naming the holder (50 rounds)', async () => {
    const bot = await a.agent('race');
    for (let round = 0; round < 50; round++) {
      const clientId = `u${round}`;
      await bot.handoff(clientId);
      const [first, second] = await Promise.all(
        ['ana', 'ben'].map((sub, i) =>
          api.takeOverConversation({
            client: bearerClient(i === 0 ? a.url : b.url, operatorToken(sub, ['race'], sub.toUpperCase())),
            path: { agentId: 'race', clientId },
          }),
        ),
      );
      const winners = [first, second].filter((r) => r.response!.status === 200);
      const losers = [first, second].filter((r) => r.response!.status === 409);
      expect([winners.length, losers.length]).toEqual([1, 1]);
      const holder = winners[0].data!.data.operator!.name;
      expect(losers[0].error).toMatchObject({ code: 'CONVERSATION_HELD', holder: { name: holder } });
    }
  });

  it('streams a followed conversation to its console on the other replica, and the bot’s traces to the bot’s consoles only', async () => {
    const bot = await a.agent('watched');
    const user = await a.client('watched', { sub: 'u9' });
    await bot.reply('u9', 'earlier');
    const ops = await consoleSocket(b.url, operatorToken('ana', ['watched'], 'Ana'), 'watched');
    const otherBot = await consoleSocket(b.url, operatorToken('ben', ['other'], 'Ben'), 'other');
    sockets.push(ops, otherBot);
    const ack = (await ops.emitWithAck('conversation:watch', { clientId: 'u9' })) as { ok: boolean; messages: ClientInboundMessage[] };
    expect(ack).toMatchObject({ ok: true, control: { clientId: 'u9', control: 'bot' }, streams: [] });
    expect(ack.messages.map((m) => m.text)).toEqual(['earlier']);
    // The lease reaches replica a (the runtime's) by a server-side emit: wait until a stream there is mirrored.
    const deltas = collect<{ text: string }>(ops, 'message:delta');
    const ended = nextEvent<{ text: string; status: string }>(ops, 'message:end');
    await waitFor(
      async () => {
        const s = await bot.stream('u9');
        await s.write('grow');
        await s.end();
        return deltas.length > 0;
      },
      5000,
      'a mirrored delta',
    );
    expect(await ended).toMatchObject({ text: 'grow', status: 'complete' });
    const userTraces = collect(user, 'debug');
    const traced = nextEvent<{ clientId: string; trace: unknown }>(ops, 'debug');
    const otherTraces = collect(otherBot, 'debug');
    await bot.debug({ step: 'prompt' }, 'u9');
    expect(await traced).toMatchObject({ agentId: 'watched', clientId: 'u9', trace: { step: 'prompt' } });
    expect(otherTraces).toEqual([]);
    expect(userTraces).toEqual([]);
  });

  it('a broadcast skips the conversations a person holds, live on both replicas and in history and replay while held', async () => {
    const bot = await a.agent('bcast');
    const free = [await a.client('bcast', { sub: 'u1' }), await b.client('bcast', { sub: 'u2' })];
    const heldTabs = [await a.client('bcast', { sub: 'u3' }), await b.client('bcast', { sub: 'u3' })];
    const ana = bearerClient(b.url, operatorToken('ana', ['bcast'], 'Ana'));
    const path = { agentId: 'bcast', clientId: 'u3' };
    const greeted = heldTabs.map((t) => nextEvent<ClientInboundMessage>(t, 'message'));
    const hello = await bot.reply('u3', 'hello');
    await Promise.all(greeted);
    const joined = heldTabs.map((t) => nextEvent(t, 'conversation:control'));
    await api.takeOverConversation({ client: ana, path });
    await Promise.all(joined);
    const heldGot = heldTabs.map((t) => collect<ClientInboundMessage>(t, 'message'));

    const reached = free.map((t) => eventWhere<ClientInboundMessage>(t, 'message', (m) => m.text === 'Sale today'));
    await bot.reply('*', 'Sale today');
    await Promise.all(reached);
    // Every replica handled the broadcast for all its sockets at once: a tab of u3 given it would
    // have it before the operator's message written afterwards on the same connection.
    const opArrived = heldTabs.map((t) => eventWhere<ClientInboundMessage>(t, 'message', (m) => m.author === 'operator'));
    await api.createOperatorMessage({ client: ana, path, body: { text: 'Still here' } });
    await Promise.all(opArrived);
    for (const got of heldGot) expect(got.map((m) => m.text)).toEqual(['Still here']);

    // Neither history nor a replay after a reconnect brings it while held.
    const history = (await heldTabs[0].emitWithAck('history', {})) as { messages: ClientInboundMessage[] };
    expect(history.messages.map((m) => m.text)).toEqual(['hello', 'Ana joined the conversation', 'Still here']);
    const again = connect(`${a.url}${Namespaces.client}`, {
      transports: ['websocket'],
      forceNew: true,
      reconnection: false,
      auth: { token: mintToken({ sub: 'u3' }), agentId: 'bcast', lastMessageId: hello.id },
    });
    sockets.push(again);
    const replayed = collect<ClientInboundMessage>(again, 'message');
    await nextEvent(again, 'session');
    expect(replayed.map((m) => m.text)).toEqual(['Ana joined the conversation', 'Still here']);
    // The users not held have it in their history.
    const freeHistory = (await free[1].emitWithAck('history', {})) as { messages: ClientInboundMessage[] };
    expect(freeHistory.messages.map((m) => m.text)).toEqual(['Sale today']);
  });

  it('keeps the control state across a restart of the hub (Redis)', async () => {
    const bot = await a.agent('restart');
    await bot.handoff('u1', { reason: 'r' });
    await api.takeOverConversation({
      client: bearerClient(a.url, operatorToken('ana', ['restart'], 'Ana')),
      path: { agentId: 'restart', clientId: 'u1' },
    });
    await a.close();
    a = await startHub({ REDIS_URL: redis.url });
    const list = await api.getConversations({
      client: bearerClient(a.url, adminToken()),
      path: { agentId: 'restart' },
      query: { control: 'human' },
    });
    expect(list.data!.data).toMatchObject([{ clientId: 'u1', control: 'human', operator: { name: 'Ana' }, reason: 'r' }]);
    const again = await a.agent('restart');
    expect(isConversationHeld(await again.reply('u1', 'x').catch((e: unknown) => e))).toBe(true);
  });
});

describe('who may operate (docs/handoff.md)', () => {
  let t: TestHub;
  beforeAll(async () => {
    t = await startHub({ HANDSHAKE_FAILURES_PER_MIN: '0' });
  });
  afterAll(() => t.close());

  it('limits an operator of bot A to bot A: no list, read, takeover, reply or release for bot B, over REST and the socket', async () => {
    const botB = await t.agent('bot-b');
    await botB.handoff('u1');
    const token = operatorToken('ana', ['bot-a']);
    const client = bearerClient(t.url, token);
    const path = { agentId: 'bot-b', clientId: 'u1' };
    for (const res of [
      await api.getConversations({ client, path: { agentId: 'bot-b' } }),
      await api.takeOverConversation({ client, path }),
      await api.createOperatorMessage({ client, path, body: { text: 'hi' } }),
      await api.releaseConversation({ client, path }),
    ]) {
      expect(res.error).toMatchObject({ status: 403, code: 'AGENT_NOT_ALLOWED' });
    }
    // Reading the transcript (REST history is for admins and keys) is refused too.
    expect((await api.getConversationMessages({ client, path })).error).toMatchObject({ status: 403, code: 'ROLE_REQUIRED' });
    const socket = connect(`${t.url}${Namespaces.operator}`, {
      transports: ['websocket'],
      forceNew: true,
      reconnection: false,
      auth: { token, agentId: 'bot-b' },
    });
    expect(await refusal(socket)).toEqual({ code: 'AGENT_NOT_ALLOWED', retryable: false });
    // Nothing changed.
    const list = await api.getConversations({ client: bearerClient(t.url, adminToken()), path: { agentId: 'bot-b' } });
    expect(list.data!.data).toMatchObject([{ clientId: 'u1', control: 'waiting' }]);
    // The same operator works on bot A.
    const ok = await consoleSocket(t.url, token, 'bot-a');
    ok.disconnect();
  });

  it("lets an operator of the bot decide a user's approval request (decidedBy the operator's name), delivered once; an operator of another bot cannot", async () => {
    const bot = await t.agent('bot-ap');
    const approvals: AgentApproval[] = [];
    bot.onApproval((a) => void approvals.push(a));
    const tool: ToolPart = { type: 'tool', toolCallId: 'c1', toolName: 'refund', state: 'approval-requested', approval: { id: 'ap1' } };
    const { id } = await bot.reply('u1', { parts: [tool] });
    const user = clientSocket(t.url, { token: mintToken({ sub: 'u1' }), agentId: 'bot-ap' });
    await nextEvent(user, 'session');
    const shown = nextEvent<MessagePartEvent>(user, 'message:part');
    const decide = (socket: Socket, payload: object) => socket.timeout(10_000).emitWithAck('approval', payload) as Promise<ApprovalAck>;
    const request = { clientId: 'u1', messageId: id, approvalId: 'ap1', approved: true, reason: 'checked the order' };
    // An operator of another bot decides in that bot only: the message is not found there.
    const other = await consoleSocket(t.url, operatorToken('bob', ['bot-z'], 'Bob'), 'bot-z');
    expect(await decide(other, request)).toMatchObject({ ok: false, error: { code: 'MESSAGE_NOT_FOUND' } });
    expect(await decide(other, { ...request, clientId: '' })).toMatchObject({ ok: false, error: { code: 'INVALID_PAYLOAD' } });
    const ana = await consoleSocket(t.url, operatorToken('ana', ['bot-ap'], 'Ana'), 'bot-ap');
    const given = await decide(ana, request);
    expect(given).toEqual({
      ok: true,
      decision: { approved: true, reason: 'checked the order', decidedBy: 'Ana', ts: expect.any(String) },
    });
    expect(await shown).toMatchObject({
      id,
      seq: 0,
      index: 0,
      part: { state: 'approval-responded', approval: { id: 'ap1', decidedBy: 'Ana' } },
    });
    expect(approvals).toEqual([
      expect.objectContaining({ id: 'ap1', messageId: id, from: 'u1', approved: true, reason: 'checked the order' }),
    ]);
    // The user's own conflicting decision comes later: the operator's stands.
    expect(await decide(user, { messageId: id, approvalId: 'ap1', approved: false })).toMatchObject({
      ok: false,
      error: { code: 'APPROVAL_DECIDED' },
      decision: { approved: true, decidedBy: 'Ana' },
    });
    expect(approvals).toHaveLength(1);
    for (const s of [user, other, ana]) s.disconnect();
  });

  it('refuses chat tokens on /ws/operator and REST operator routes, and an operator token on /ws/client', async () => {
    const chat = mintToken({ sub: 'u1' });
    const socket = connect(`${t.url}${Namespaces.operator}`, {
      transports: ['websocket'],
      forceNew: true,
      reconnection: false,
      auth: { token: chat, agentId: 'bot-a' },
    });
    expect(await refusal(socket)).toEqual({ code: 'OPERATOR_REQUIRED', retryable: false });
    const forged = mintToken({ sub: 'ana', roles: ['OPERATOR'], agentIds: ['bot-a'] });
    expect((await api.getConversations({ client: bearerClient(t.url, forged), path: { agentId: 'bot-a' } })).error).toMatchObject({
      status: 403,
      code: 'ROLE_REQUIRED',
    });
    const client = connect(`${t.url}${Namespaces.client}`, {
      transports: ['websocket'],
      forceNew: true,
      reconnection: false,
      auth: { token: operatorToken('ana', ['bot-a']), agentId: 'bot-a' },
    });
    expect(await refusal(client)).toEqual({ code: 'TOKEN_INVALID', retryable: false });
  });

  it('gives a user no way to change control or write as an operator', async () => {
    const bot = await t.agent('bot-c');
    const seen: AgentInboundMessage[] = [];
    bot.onMessage((m) => void seen.push(m));
    const user = await t.client('bot-c', { sub: 'mallory' });
    // The operator's events are refused on a user's socket (and a bot's) with a code, not left to time out; nothing changes.
    const refused = { ok: false, error: { code: 'OPERATOR_REQUIRED' } };
    for (const event of ['conversation:control', 'conversation:watch']) {
      const payload = { agentId: 'bot-c', clientId: 'mallory', control: 'human' };
      expect(await user.timeout(5000).emitWithAck(event, payload)).toMatchObject(refused);
    }
    // A message claiming to be an operator's is a user message (extra fields are not part of it).
    const ack = (await user.emitWithAck('message', {
      clientMessageId: 'm1',
      text: 'hi',
      author: 'operator',
      operator: { name: 'Ana' },
    })) as {
      ok: boolean;
    };
    expect(ack.ok).toBe(true);
    const history = (await user.emitWithAck('history', {})) as { messages: ClientInboundMessage[] };
    expect(history.messages).toMatchObject([{ author: 'user', text: 'hi' }]);
    expect(history.messages[0].operator).toBeUndefined();
    const list = await api.getConversations({ client: bearerClient(t.url, adminToken()), path: { agentId: 'bot-c' } });
    expect(list.data!.data).toMatchObject([{ clientId: 'mallory', control: 'bot' }]);
    // A user's chat token is refused on the operator routes.
    const res = await api.takeOverConversation({
      client: bearerClient(t.url, mintToken({ sub: 'mallory' })),
      path: { agentId: 'bot-c', clientId: 'mallory' },
    });
    expect(res.error).toMatchObject({ status: 403, code: 'ROLE_REQUIRED' });
    // A bot's runtime socket is refused them the same way.
    const runtime = await connected(agentSocket(t.url, { apiKey: TEST_AGENT_KEY, agentId: 'bot-c' }));
    for (const event of ['conversation:control', 'conversation:watch']) {
      expect(await runtime.timeout(5000).emitWithAck(event, { clientId: 'mallory', control: 'human' })).toMatchObject(refused);
    }
    runtime.disconnect();
    expect(
      (await api.getConversations({ client: bearerClient(t.url, adminToken()), path: { agentId: 'bot-c' } })).data!.data,
    ).toMatchObject([{ clientId: 'mallory', control: 'bot' }]);
  });

  it('stops an answer under way when an operator takes the conversation over: the runtime is told to stop and the user sees it end cancelled', async () => {
    const bot = await t.agent('bot-e');
    const user = await t.client('bot-e', { sub: 'u1' });
    const stream = await bot.stream('u1');
    await stream.write('part one ');
    const ended = nextEvent<{ id: string; status: string; text: string }>(user, 'message:end');
    await api.takeOverConversation({ client: bearerClient(t.url, adminToken()), path: { agentId: 'bot-e', clientId: 'u1' } });
    await waitFor(() => stream.signal.aborted, 5000, 'the stop to reach the runtime');
    // The runtime ends it as the SDK does on a stop (or the hub would after STREAM_STOP_GRACE_MS).
    await stream.end();
    expect(await ended).toMatchObject({ id: stream.id, status: 'cancelled', text: 'part one ' });
  });

  it('refuses an operator message from an operator who does not hold the conversation, sending nothing', async () => {
    const bot = await t.agent('bot-d');
    await bot.handoff('u1');
    const user = await t.client('bot-d', { sub: 'u1' });
    const got = collect<ClientInboundMessage>(user, 'message');
    const ana = bearerClient(t.url, operatorToken('ana', ['bot-d'], 'Ana'));
    const ben = bearerClient(t.url, operatorToken('ben', ['bot-d'], 'Ben'));
    const path = { agentId: 'bot-d', clientId: 'u1' };
    expect((await api.createOperatorMessage({ client: ana, path, body: { text: 'early' } })).error).toMatchObject({
      status: 409,
      code: 'CONVERSATION_NOT_HELD',
    });
    await api.takeOverConversation({ client: ana, path });
    expect((await api.createOperatorMessage({ client: ben, path, body: { text: 'mine' } })).error).toMatchObject({
      status: 409,
      code: 'CONVERSATION_HELD',
      holder: { name: 'Ana' },
    });
    expect((await api.releaseConversation({ client: ben, path })).error).toMatchObject({ status: 409, code: 'CONVERSATION_HELD' });
    expect((await api.createOperatorMessage({ client: ana, path, body: { text: '' } })).error).toMatchObject({ status: 400 });
    const history = (await user.emitWithAck('history', {})) as { messages: ClientInboundMessage[] };
    expect(history.messages.filter((m) => m.author === 'operator')).toEqual([]);
    expect(got.filter((m) => m.author === 'operator')).toEqual([]);
  });
  it('sends an operator message in parts checked as a bot’s: a bad part is refused with the field and nothing is sent', async () => {
    await t.agent('bot-p');
    const user = await t.client('bot-p', { sub: 'u1' });
    const got = collect<ClientInboundMessage>(user, 'message');
    const ana = bearerClient(t.url, operatorToken('ana', ['bot-p'], 'Ana'));
    const path = { agentId: 'bot-p', clientId: 'u1' };
    await api.takeOverConversation({ client: ana, path });
    const bad = [
      [{ type: 'file', url: 'javascript:alert(1)', mediaType: 'text/html' }],
      [{ type: 'nope' }],
      [{ type: 'tool', toolCallId: 't1', toolName: 'refund', state: 'approval-responded' }],
    ];
    for (const parts of bad) {
      const res = await api.createOperatorMessage({ client: ana, path, body: { text: '', parts: parts as never } });
      // tsoa's schema check names `body.parts.0`, the parts check (a bot's) `body.parts[0]`.
      expect(res.error).toMatchObject({
        status: 400,
        code: 'VALIDATION_FAILED',
        errors: [{ path: expect.stringMatching(/^body\.parts(\.0|\[0\])/) }],
      });
    }
    expect(
      (await api.createOperatorMessage({ client: ana, path, body: { text: 'not the parts', parts: [{ type: 'text', text: 'x' }] } })).error,
    ).toMatchObject({
      status: 400,
      errors: [{ path: 'body.text' }],
    });
    const history = (await user.emitWithAck('history', {})) as { messages: ClientInboundMessage[] };
    expect(history.messages.filter((m) => m.author === 'operator')).toEqual([]);
    const arrived = eventWhere<ClientInboundMessage>(user, 'message', (m) => m.author === 'operator');
    const parts = [
      { type: 'text', text: 'Here is the form.' },
      { type: 'file', url: 'https://example.com/returns.pdf', mediaType: 'application/pdf', filename: 'returns.pdf' },
      { type: 'suggestions', items: [{ text: 'Thanks' }] },
    ];
    const sent = await api.createOperatorMessage({ client: ana, path, body: { text: '', parts: parts as never } });
    expect(sent.response!.status).toBe(201);
    expect(await arrived).toMatchObject({ author: 'operator', text: 'Here is the form.', parts, operator: { name: 'Ana' } });
    expect(got.filter((m) => m.author === 'operator')).toHaveLength(1);
  });
});

describe('idle hand-back (HANDOFF_IDLE_TIMEOUT_S)', () => {
  let t: TestHub;
  beforeAll(async () => {
    t = await startHub({ HANDOFF_IDLE_TIMEOUT_S: '1', HANDOFF_SWEEP_MS: '100' });
  });
  afterAll(() => t.close());

  it('hands a held conversation back to the bot after the timeout without an operator message, and tells the user and the bot', async () => {
    const bot = await t.agent('idle');
    const toBot = new Promise<ConversationControl>((resolve) => bot.onControl((c) => void (c.control === 'bot' && resolve(c))));
    const user = await t.client('idle', { sub: 'u1' });
    await api.takeOverConversation({ client: bearerClient(t.url, adminToken()), path: { agentId: 'idle', clientId: 'u1' } });
    const back = eventWhere<{ control: string }>(user, 'conversation:control', (c) => c.control === 'bot');
    const started = Date.now();
    expect(await back).toEqual({ agentId: 'idle', control: 'bot' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(700);
    expect(await toBot).toMatchObject({ clientId: 'u1', control: 'bot' });
    await bot.reply('u1', 'I am back');
  });
});

describe('changes of control in metrics and the audit log', () => {
  const logLines: string[] = [];
  let t: TestHub;
  beforeAll(async () => {
    t = await startHub({ LOG_LEVEL: 'info' }, { logLines });
  });
  afterAll(() => t.close());

  it('counts each change by state and cause, and writes an audit line naming who did it (never the text)', async () => {
    const bot = await t.agent('audited');
    await bot.handoff('u1', { reason: 'r' });
    const ana = bearerClient(t.url, operatorToken('ana', ['audited'], 'Ana'));
    const path = { agentId: 'audited', clientId: 'u1' };
    await api.takeOverConversation({ client: ana, path });
    await api.createOperatorMessage({ client: ana, path, body: { text: 'secret words' } });
    await api.releaseConversation({ client: ana, path });
    const counted = await t.hub.metrics.registry.getSingleMetric('relay_control_changes_total')!.get();
    expect(Object.fromEntries(counted.values.map((v) => [`${v.labels.to}/${v.labels.cause}`, v.value]))).toEqual({
      'waiting/handoff': 1,
      'human/takeover': 1,
      'bot/release': 1,
    });
    const audit = logLines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.component === 'audit');
    expect(audit.map((l) => [l.audit, l.from, l.to, l.cause, l.operator])).toEqual([
      ['conversation.control', 'bot', 'waiting', 'handoff', undefined],
      ['conversation.control', 'waiting', 'human', 'takeover', 'ana'],
      ['conversation.operator-message', undefined, undefined, undefined, 'ana'],
      ['conversation.control', 'human', 'bot', 'release', 'ana'],
    ]);
    expect(audit[1].actor).toEqual({ kind: 'operator', sub: 'ana', admin: false });
    expect(logLines.join('\n')).not.toContain('secret words');
  });
});
