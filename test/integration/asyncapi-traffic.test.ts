import Ajv, { type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { Socket } from 'socket.io-client';
import { Events, type SendAck } from '../../src/protocol';
import { agentSocket, clientSocket, connected, nextEvent, refusal, startHub, type TestHub } from '../helpers/hub';
import { mintToken, TEST_AGENT_KEY } from '../helpers/tokens';

/**
 * The AsyncAPI document describes the wire as it is: live traffic of a real hub (payloads the hub
 * sends and the acks it answers with) validates against the schemas of the document the hub
 * serves at /asyncapi.json, and a payload that breaks the schema is told apart.
 */
describe('live traffic matches the AsyncAPI document', () => {
  let h: TestHub;
  let ajv: Ajv;
  const opened: Socket[] = [];
  const schema = (name: string): ValidateFunction => ajv.getSchema(`asyncapi#/components/schemas/${name}`)!;
  const expectValid = (name: string, value: unknown): unknown => {
    const validate = schema(name);
    expect({ name, value, valid: validate(value), errors: validate.errors ?? null }).toEqual({ name, value, valid: true, errors: null });
    return value;
  };
  const ack = <T>(socket: Socket, event: string, payload: unknown) => socket.timeout(5000).emitWithAck(event, payload) as Promise<T>;
  const open = (socket: Socket) => {
    opened.push(socket);
    return connected(socket);
  };

  beforeAll(async () => {
    h = await startHub();
    const document = (await (await fetch(`${h.url}/asyncapi.json`)).json()) as Record<string, unknown>;
    // strict: false lets the document's own keys and the x-retryable extension through.
    ajv = new Ajv({ strict: false, allErrors: true });
    addFormats(ajv);
    ajv.addSchema(document, 'asyncapi');
  });
  afterAll(async () => {
    for (const socket of opened) socket.disconnect();
    await h?.close();
  });

  it('every payload the hub sends and every ack it answers with fits its schema', async () => {
    const client = clientSocket(h.url, { token: mintToken({ sub: 'user-1', expiresIn: 30 }), agentId: 'bot' });
    const session = nextEvent(client, Events.session);
    const expiring = nextEvent(client, Events.authExpiring);
    await open(client);
    expectValid('SessionInfo', await session);
    expectValid('AuthExpiring', await expiring);
    const admin = clientSocket(h.url, { token: mintToken({ sub: 'ops', roles: ['ADMIN'] }), agentId: 'bot' });
    await open(admin);

    const online = nextEvent(client, Events.agentStatus);
    const agent = agentSocket(h.url, { apiKey: TEST_AGENT_KEY, agentId: 'bot' });
    agent.on(Events.message, (_message: unknown, reply: (res: { ok: boolean }) => void) => reply({ ok: true }));
    const inbound = nextEvent(agent, Events.message);
    await open(agent);
    expectValid('AgentStatus', await online);

    expectValid('SendAck', await ack<SendAck>(client, Events.message, { clientMessageId: 'c-1', text: 'hi', data: { n: 1 } }));
    expectValid('AgentInboundMessage', await inbound);
    expect(expectValid('SendAck', await ack(client, Events.message, { clientMessageId: '', text: 'bad' }))).toMatchObject({ ok: false });

    const toClient = nextEvent(client, Events.message);
    expectValid('SendAck', await ack(agent, Events.reply, { to: 'user-1', text: 'hello', replyTo: 'c-1' }));
    expectValid('ClientInboundMessage', await toClient);

    const trace = nextEvent(admin, Events.debug);
    expectValid('DebugAck', await ack(agent, Events.debug, { clientId: 'user-1', trace: { step: 1 } }));
    expectValid('DebugTrace', await trace);
    expect(expectValid('DebugAck', await ack(agent, Events.debug, { trace: 1, clientId: 5 }))).toMatchObject({ ok: false });

    expectValid('RefreshAck', await ack(client, Events.authRefresh, { token: mintToken({ sub: 'user-1' }) }));
    const mismatch = await ack(client, Events.authRefresh, { token: mintToken({ sub: 'someone-else' }) });
    expect(expectValid('RefreshAck', mismatch)).toMatchObject({ ok: false, error: { code: 'SUB_MISMATCH' } });

    const closed = nextEvent(client, Events.sessionClosed);
    await h.hub.relay.service.sessions.deactivateUser('user-1');
    expectValid('SessionClosed', await closed);

    expectValid('HandshakeErrorData', await refusal(clientSocket(h.url, { token: 'not-a-jwt', agentId: 'bot' })));
    expectValid('HandshakeErrorData', await refusal(agentSocket(h.url, { apiKey: 'wrong', agentId: 'bot' })));
  });

  it('traffic with parts fits too: replies, stream parts, deltas by index, updates, snapshots, approvals (docs/parts.md)', async () => {
    const agent = agentSocket(h.url, { apiKey: TEST_AGENT_KEY, agentId: 'parts-bot' });
    const approvals: unknown[] = [];
    agent.on(Events.approval, (approval: unknown, reply: (res: { ok: boolean }) => void) => {
      approvals.push(approval);
      reply({ ok: true });
    });
    await open(agent);
    const tab = () => clientSocket(h.url, { token: mintToken({ sub: 'user-2' }), agentId: 'parts-bot' });
    const client = tab();
    const seen: { event: string; payload: unknown }[] = [];
    client.onAny((event: string, payload: unknown) => seen.push({ event, payload }));
    await open(client);
    const parts = [
      { type: 'reasoning', text: 'r' },
      { type: 'text', text: 'See ' },
      { type: 'source', sourceId: 's1', url: 'https://example.com', title: 'Example' },
      { type: 'file', url: 'https://example.com/a.png', mediaType: 'image/png', size: 3 },
      { type: 'data', name: 'card', data: [1, { a: null }] },
      { type: 'suggestions', items: [{ text: 'More' }] },
    ];
    const toClient = nextEvent(client, Events.message);
    expectValid('SendAck', await ack(agent, Events.reply, { to: 'user-2', text: '', parts }));
    expect(expectValid('ClientInboundMessage', await toClient)).toMatchObject({ parts });
    const started = await ack<{ id: string }>(agent, Events.streamStart, { to: 'user-2', parts: [{ type: 'reasoning', text: 'think' }] });
    const { id } = expectValid('StreamStartAck', started) as { id: string };
    const tool = { type: 'tool', toolCallId: 'c1', toolName: 'send', state: 'input-streaming' };
    expectValid('StreamPartAck', await ack(agent, Events.streamPart, { id, part: tool }));
    expectValid('StreamDeltaAck', await ack(agent, Events.streamDelta, { id, index: 1, text: '{"to":1}' }));
    expectValid('StreamDeltaAck', await ack(agent, Events.streamDelta, { id, text: 'Answer' }));
    const ask = { state: 'approval-requested', input: { to: 1 }, approval: { id: 'a1' } };
    expectValid('StreamUpdateAck', await ack(agent, Events.streamUpdate, { id, index: 1, part: ask }));
    expectValid('StreamUpdateAck', await ack(agent, Events.streamUpdate, { id, index: 9, part: {} }));
    // A second tab now gets the snapshot with the parts so far.
    const late = tab();
    const snapshot = nextEvent(late, Events.messageStart);
    await open(late);
    expect(expectValid('MessageStart', await snapshot)).toMatchObject({ id, seq: 4 });
    expectValid('ApprovalAck', await ack(client, Events.approval, { messageId: id, approvalId: 'a1', approved: true }));
    expectValid('ApprovalAck', await ack(client, Events.approval, { messageId: id, approvalId: 'a1', approved: false }));
    expectValid('ApprovalAck', await ack(client, Events.approval, { messageId: id, approvalId: 'zz', approved: false }));
    expect(approvals).toHaveLength(1);
    expectValid('AgentApproval', approvals[0]);
    const ended = nextEvent(client, Events.messageEnd);
    expectValid('StreamEndAck', await ack(agent, Events.streamEnd, { id }));
    expectValid('MessageEnd', await ended);
    const byEvent: Record<string, string> = {
      [Events.messageStart]: 'MessageStart',
      [Events.messageDelta]: 'MessageDelta',
      [Events.messagePart]: 'MessagePartEvent',
      [Events.messageEnd]: 'MessageEnd',
    };
    const streamed = seen.filter((e) => byEvent[e.event] !== undefined);
    expect(streamed.map((e) => e.event)).toEqual([
      Events.messageStart,
      Events.messagePart,
      Events.messageDelta,
      Events.messageDelta,
      Events.messagePart,
      Events.messagePart,
      Events.messageEnd,
    ]);
    for (const { event, payload } of streamed) expectValid(byEvent[event], payload);
    expectValid('HistoryAck', await ack(client, Events.history, {}));
  });

  it('tells apart payloads that break the schema', () => {
    expect(schema('SendAck')({ ok: true, id: 'not-a-uuid', ts: new Date().toISOString() })).toBe(false);
    expect(schema('SessionClosed')({ code: 'NOT_A_CODE', retryable: false })).toBe(false);
    expect(
      schema('ClientInboundMessage')({ id: '0190a5d2-7c3e-7000-8000-000000000000', ts: 'x', agentId: 'bot', author: 'agent', text: '' }),
    ).toBe(false);
    expect(schema('HandshakeErrorData')({ code: 'TOKEN_EXPIRED' })).toBe(false);
    expect(schema('MessagePart')({ type: 'file', url: 'javascript:alert(1)', mediaType: 'text/html' })).toBe(false);
    expect(schema('MessagePart')({ type: 'video' })).toBe(false);
    expect(schema('MessageDelta')({ id: '0190a5d2-7c3e-7000-8000-000000000000', seq: 1, text: 'x' })).toBe(false);
  });
});
