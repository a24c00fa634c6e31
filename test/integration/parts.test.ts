import { sleep } from '../helpers/wait';
// Answers in parts on one hub (docs/parts.md): replies, publishes and streams carry parts; streams
// grow them by index with every change one seq; approvals are recorded once, shown to every tab and
// delivered to the bot with an ack; every bad part is refused naming it, with nothing changed.
import type { Socket } from 'socket.io-client';
import type {
  AgentApproval,
  ApprovalAck,
  ClientInboundMessage,
  HistoryAck,
  MessageEnd,
  MessagePart,
  MessagePartEvent,
  ToolPart,
} from '../../src/protocol';
import { agentSocket, clientSocket, connected, startHub, type TestHub } from '../helpers/hub';
import { ack, partsView, pipelinedChanges, record, type Recorder } from '../helpers/streams';
import { mintToken, TEST_AGENT_KEY } from '../helpers/tokens';
import { adminToken, api, bearerClient, createKey } from './rest-client.helper';

let t: TestHub;
const opened: Socket[] = [];
beforeAll(async () => {
  t = await startHub({ MESSAGE_MAX_PARTS: '6', STREAM_MAX_BYTES: '4096', STREAM_DELTA_RATE_PER_S: '500', STREAM_DELTA_RATE_BURST: '500' });
});
afterAll(() => t.close());
afterEach(() => {
  for (const s of opened.splice(0)) s.disconnect();
});

interface Peer {
  socket: Socket;
  rec: Recorder;
  /** Approvals the runtime received, in order (it acks each). */
  approvals: AgentApproval[];
}

async function runtime(agentId: string, url = t.url): Promise<Peer> {
  const socket = agentSocket(url, { apiKey: TEST_AGENT_KEY, agentId });
  opened.push(socket);
  const approvals: AgentApproval[] = [];
  socket.on('approval', (a: AgentApproval, done: (r: unknown) => void) => {
    approvals.push(a);
    done({ ok: true });
  });
  const rec = record(socket);
  await connected(socket);
  return { socket, rec, approvals };
}

async function tab(agentId: string, sub: string, url = t.url): Promise<Peer> {
  const socket = clientSocket(url, { token: mintToken({ sub }), agentId });
  opened.push(socket);
  const rec = record(socket);
  await connected(socket);
  await rec.wait('session');
  return { socket, rec, approvals: [] };
}

type Ack = { ok: boolean; id?: string; ts?: string; seq?: number; index?: number; error?: { code: string; message: string } };
const history = async (c: Socket) => (await ack<HistoryAck & { ok: true }>(c, 'history', {})).messages;

const reasoning: MessagePart = { type: 'reasoning', text: 'Look it up.' };
const source: MessagePart = { type: 'source', sourceId: 's1', url: 'https://example.com/a', title: 'A' };
const file: MessagePart = { type: 'file', url: 'https://example.com/chart.png', mediaType: 'image/png', filename: 'chart.png' };
const suggestions: MessagePart = { type: 'suggestions', items: [{ text: 'More?' }, { text: 'Thanks', value: 'thank you' }] };
const data: MessagePart = { type: 'data', name: 'weather-card', data: { tempC: 21 } };
const askTool = (approvalId: string): ToolPart => ({
  type: 'tool',
  toolCallId: `call-${approvalId}`,
  toolName: 'send_email',
  state: 'approval-requested',
  input: { to: 'ana@example.com' },
  approval: { id: approvalId },
});

describe('replies and publishes with parts', () => {
  it('delivers, logs and pages parts; text is the concatenation of the text parts; a plain reply has none', async () => {
    const rt = await runtime('p-reply');
    const a = await tab('p-reply', 'u1');
    const parts: MessagePart[] = [reasoning, { type: 'text', text: 'It is ' }, source, { type: 'text', text: 'sunny.' }, file, suggestions];
    const sent = await ack<Ack>(rt.socket, 'reply', { to: 'u1', text: '', parts });
    expect(sent).toMatchObject({ ok: true });
    const got = await a.rec.wait<ClientInboundMessage>('message', (m) => m.id === sent.id);
    expect(got).toMatchObject({ author: 'agent', text: 'It is sunny.', parts });
    // A text that is the concatenation is accepted as is; a text alone stays plain.
    expect(await ack<Ack>(rt.socket, 'reply', { to: 'u1', text: 'Hi', parts: [{ type: 'text', text: 'Hi' }, data] })).toMatchObject({
      ok: true,
    });
    const plain = await ack<Ack>(rt.socket, 'reply', { to: 'u1', text: 'plain' });
    const plainGot = await a.rec.wait<ClientInboundMessage>('message', (m) => m.id === plain.id);
    expect(plainGot).not.toHaveProperty('parts');
    // Parts without a text part and a text: the text becomes the first part.
    const lead = await ack<Ack>(rt.socket, 'reply', { to: 'u1', text: 'See:', parts: [source] });
    expect(await a.rec.wait<ClientInboundMessage>('message', (m) => m.id === lead.id)).toMatchObject({
      text: 'See:',
      parts: [{ type: 'text', text: 'See:' }, source],
    });
    const logged = await history(a.socket);
    expect(logged.map((m) => m.parts)).toEqual([
      parts,
      [{ type: 'text', text: 'Hi' }, data],
      undefined,
      [{ type: 'text', text: 'See:' }, source],
    ]);
    const admin = bearerClient(t.url, adminToken());
    const rest = await api.getConversationMessages({ client: admin, path: { agentId: 'p-reply', clientId: 'u1' } });
    expect(rest.data!.data.find((m) => m.id === sent.id)).toMatchObject({ text: 'It is sunny.', parts });
  });

  it('publishes parts over REST, and refuses a bad part with 400 naming it, sending nothing', async () => {
    const a = await tab('p-rest', 'u1');
    const key = await createKey(t.url, ['messages:publish']);
    const headers = { 'api-key': key, 'content-type': 'application/json' };
    const publish = (body: unknown) => fetch(`${t.url}/agents/p-rest/messages`, { method: 'POST', headers, body: JSON.stringify(body) });
    const ok = await publish({ to: 'u1', text: '', parts: [{ type: 'text', text: 'Shipped.' }, source] });
    expect(ok.status).toBe(202);
    expect(await a.rec.wait<ClientInboundMessage>('message')).toMatchObject({
      text: 'Shipped.',
      parts: [{ type: 'text', text: 'Shipped.' }, source],
    });
    const bad = await publish({
      to: 'u1',
      text: '',
      parts: [
        { type: 'text', text: 'x' },
        { type: 'file', url: 'javascript:alert(1)', mediaType: 'text/html' },
      ],
    });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(await bad.json())).toMatch(/parts/);
    const tooMany = await publish({ to: 'u1', text: '', parts: Array.from({ length: 7 }, () => source) });
    expect(tooMany.status).toBe(400);
    expect(await history(a.socket)).toHaveLength(1);
  });

  it('refuses every bad part of a reply or a user message with INVALID_PAYLOAD naming it, logging and sending nothing', async () => {
    const rt = await runtime('p-bad');
    const a = await tab('p-bad', 'u1');
    const cases: [unknown[], RegExp, string?][] = [
      [[{ type: 'video', url: 'https://x.example' }], /parts\[0\]: unknown part type "video"/],
      [[{ type: 'file', url: 'javascript:alert(1)', mediaType: 'text/html' }], /parts\[0\] \(file\)\.url/],
      [[{ type: 'file', url: 'data:text/html,<b>x</b>', mediaType: 'text/html' }], /parts\[0\] \(file\)\.url/],
      [[{ type: 'source', sourceId: 's', url: '/relative' }], /parts\[0\] \(source\)\.url/],
      [[{ type: 'data', name: 'bad name!', data: 1 }], /parts\[0\] \(data\)\.name/],
      [[{ type: 'suggestions', items: Array.from({ length: 11 }, (_, i) => ({ text: `s${i}` })) }], /parts\[0\] \(suggestions\)\.items/],
      [[{ type: 'suggestions', items: [{ text: 'x'.repeat(201) }] }], /parts\[0\] \(suggestions\)\.items\.0\.text/],
      [[source, { type: 'tool', toolCallId: 'c', toolName: 't', state: 'flying' }], /parts\[1\] \(tool\)\.state/],
      [[{ type: 'tool', toolCallId: 'c', toolName: 't', state: 'approval-responded', approval: { id: 'a' } }], /approval-responded/],
      [
        [{ type: 'tool', toolCallId: 'c', toolName: 't', state: 'approval-requested', approval: { id: 'a', approved: true } }],
        /set by the hub/,
      ],
      [[{ type: 'tool', toolCallId: 'c', toolName: 't', state: 'approval-requested' }], /needs approval\.id/],
      [Array.from({ length: 7 }, () => source), /MESSAGE_MAX_PARTS/],
      [[{ type: 'text', text: 'one' }], /concatenation/, 'two'],
    ];
    for (const [parts, message, text = ''] of cases) {
      const refused = await ack<Ack>(rt.socket, 'reply', { to: 'u1', text, parts });
      expect({ parts, refused }).toEqual({
        parts,
        refused: { ok: false, error: { code: 'INVALID_PAYLOAD', message: expect.stringMatching(message) } },
      });
    }
    // A user may send text, file and data parts; not a bot's suggestions.
    const user = (parts: unknown, clientMessageId: string) => ack<Ack>(a.socket, 'message', { clientMessageId, text: '', parts });
    expect(await user([suggestions], 'm1')).toMatchObject({
      ok: false,
      error: { code: 'INVALID_PAYLOAD', message: expect.stringMatching(/user message/) },
    });
    expect(await user([{ type: 'file', url: 'ftp://x.example/a', mediaType: 'a/b' }], 'm2')).toMatchObject({
      ok: false,
      error: { code: 'INVALID_PAYLOAD' },
    });
    // Past MAX_MESSAGE_BYTES with parts: too large.
    expect(
      await ack<Ack>(rt.socket, 'reply', { to: 'u1', text: '', parts: [{ type: 'data', name: 'big', data: 'x'.repeat(70_000) }] }),
    ).toMatchObject({
      ok: false,
      error: { code: 'PAYLOAD_TOO_LARGE' },
    });
    expect(await history(a.socket)).toEqual([]);
    expect(a.rec.of('message')).toEqual([]);
    // A user's file part reaches the bot with its message.
    const got = new Promise<unknown>((resolve) =>
      rt.socket.once('message', (m: unknown, done: (r: unknown) => void) => (done({ ok: true }), resolve(m))),
    );
    expect(await user([{ type: 'text', text: 'see ' }, file], 'm3')).toMatchObject({ ok: true });
    expect(await got).toMatchObject({ from: 'u1', text: 'see ', parts: [{ type: 'text', text: 'see ' }, file] });
  });
});

describe('streams with parts', () => {
  it('grows reasoning, a streaming tool call, sources and text by index, each change one seq; a tab joining mid-way gets the parts so far and the rest', async () => {
    const rt = await runtime('p-stream');
    const first = await tab('p-stream', 'u1');
    const { id } = await ack<Ack>(rt.socket, 'stream:start', { to: 'u1', parts: [reasoning] });
    const s = (event: string, payload: object) => ack<Ack>(rt.socket, event, { id, ...payload });
    expect(await s('stream:delta', { index: 0, text: ' Then answer.' })).toEqual({ ok: true, seq: 1 });
    const tool: ToolPart = { type: 'tool', toolCallId: 'c1', toolName: 'search', state: 'input-streaming' };
    expect(await s('stream:part', { part: tool })).toEqual({ ok: true, seq: 2, index: 1 });
    expect(await s('stream:delta', { index: 1, text: '{"q":"pa' })).toEqual({ ok: true, seq: 3 });
    const late = await tab('p-stream', 'u1');
    expect(await s('stream:delta', { index: 1, text: 'ris"}' })).toEqual({ ok: true, seq: 4 });
    expect(await s('stream:update', { index: 1, part: { state: 'input-available', input: { q: 'paris' } } })).toEqual({ ok: true, seq: 5 });
    expect(await s('stream:update', { index: 1, part: { state: 'output-available', output: { hits: 3 } } })).toEqual({ ok: true, seq: 6 });
    expect(await s('stream:part', { part: source })).toEqual({ ok: true, seq: 7, index: 2 });
    // Without index: a new text part, then the same one.
    expect(await s('stream:delta', { text: 'Paris ' })).toEqual({ ok: true, seq: 8 });
    expect(await s('stream:delta', { text: 'is nice.' })).toEqual({ ok: true, seq: 9 });
    expect(await s('stream:part', { part: suggestions })).toEqual({ ok: true, seq: 10, index: 4 });
    const parts: MessagePart[] = [
      { type: 'reasoning', text: 'Look it up. Then answer.' },
      { ...tool, inputText: '{"q":"paris"}', state: 'output-available', input: { q: 'paris' }, output: { hits: 3 } },
      source,
      { type: 'text', text: 'Paris is nice.' },
      suggestions,
    ];
    // A tab connecting now gets the snapshot with every part so far.
    const third = await tab('p-stream', 'u1');
    const snapshot = await third.rec.wait<{ parts: MessagePart[]; seq: number; text: string }>('message:start');
    expect(snapshot).toMatchObject({ id, seq: 10, text: 'Paris is nice.', parts });
    expect(await s('stream:end', {})).toMatchObject({ ok: true, id });
    for (const peer of [first, late, third]) {
      const end = await peer.rec.wait<MessageEnd>('message:end');
      expect(end).toMatchObject({ id, text: 'Paris is nice.', parts, status: 'complete' });
      const view = partsView(peer.rec, id!);
      expect({ gaps: view.gaps, doubles: view.doubles }).toEqual({ gaps: 0, doubles: 0 });
    }
    // The live view before the end equals the final parts.
    const liveOnly = partsView({ ...late.rec, events: late.rec.events.filter((e) => e.event !== 'message:end') }, id!);
    expect(liveOnly.parts).toEqual(parts);
    expect((await history(first.socket)).find((m) => m.id === id)).toMatchObject({ text: 'Paris is nice.', parts });
  });

  it('takes changes sent without waiting for acks, each checked against the ones before it: all recorded, in order, nothing doubled or skipped', async () => {
    const rt = await runtime('p-pipe');
    const a = await tab('p-pipe', 'u1');
    const { id } = await ack<Ack>(rt.socket, 'stream:start', { to: 'u1' });
    const { acks, parts } = await pipelinedChanges(rt.socket, id!, 2);
    expect(acks).toEqual(acks.map((_, i) => expect.objectContaining({ ok: true, seq: i + 1 })));
    expect(await ack<Ack>(rt.socket, 'stream:end', { id })).toMatchObject({ ok: true });
    expect(await a.rec.wait<MessageEnd>('message:end')).toMatchObject({ id, parts, text: 'answer 0.answer 1.' });
    const live = partsView({ ...a.rec, events: a.rec.events.filter((e) => e.event !== 'message:end') }, id!);
    expect(live).toMatchObject({ parts, seq: acks.length, gaps: 0, doubles: 0 });
  });

  it('refuses every bad change with its code, changing nothing: the next change takes the next seq', async () => {
    const rt = await runtime('p-stream-bad');
    const a = await tab('p-stream-bad', 'u1');
    const { id } = await ack<Ack>(rt.socket, 'stream:start', { to: 'u1' });
    const s = (event: string, payload: object) => ack<Ack>(rt.socket, event, { id, ...payload });
    expect(await s('stream:part', { part: { type: 'tool', toolCallId: 'c', toolName: 't', state: 'input-available' } })).toEqual({
      ok: true,
      seq: 1,
      index: 0,
    });
    expect(await s('stream:part', { part: source })).toEqual({ ok: true, seq: 2, index: 1 });
    const refusals: [string, object, string, RegExp][] = [
      ['stream:delta', { index: 5, text: 'x' }, 'INVALID_PAYLOAD', /no part 5/],
      ['stream:delta', { index: 1, text: 'x' }, 'INVALID_PAYLOAD', /takes no deltas/],
      ['stream:delta', { index: 0, text: 'x' }, 'INVALID_PAYLOAD', /takes no deltas/],
      ['stream:update', { index: 0, part: { type: 'text' } }, 'INVALID_PAYLOAD', /type never changes/],
      ['stream:update', { index: 0, part: { state: 'input-streaming' } }, 'INVALID_PAYLOAD', /cannot move/],
      ['stream:update', { index: 0, part: { state: 'approval-responded' } }, 'INVALID_PAYLOAD', /only a user's decision/],
      ['stream:update', { index: 1, part: { url: 'javascript:x' } }, 'INVALID_PAYLOAD', /\(source\)\.url/],
      ['stream:update', { index: 9, part: {} }, 'INVALID_PAYLOAD', /no part 9/],
      ['stream:part', { part: { type: 'nope' } }, 'INVALID_PAYLOAD', /unknown part type "nope"/],
      ['stream:part', { part: { type: 'data', name: 'big', data: 'x'.repeat(5000) } }, 'PAYLOAD_TOO_LARGE', /MAX_BYTES|exceeds/],
    ];
    for (const [event, payload, code, message] of refusals) {
      const refused = await s(event, payload);
      expect({ event, payload, refused }).toEqual({
        event,
        payload,
        refused: { ok: false, error: { code, message: expect.stringMatching(message) } },
      });
    }
    for (let i = 0; i < 4; i++) expect(await s('stream:part', { part: source })).toMatchObject({ ok: true, seq: 3 + i });
    expect(await s('stream:part', { part: source })).toMatchObject({
      ok: false,
      error: { code: 'INVALID_PAYLOAD', message: expect.stringMatching(/MESSAGE_MAX_PARTS/) },
    });
    expect(await s('stream:end', {})).toMatchObject({ ok: true });
    const end = await a.rec.wait<MessageEnd>('message:end');
    expect(end.parts).toHaveLength(6);
    expect(partsView(a.rec, id!)).toMatchObject({ seq: 6, gaps: 0, doubles: 0 });
  });
});

describe('approvals', () => {
  const approve = (c: Socket, messageId: string, approvalId: string, approved = true, reason?: string) =>
    ack<ApprovalAck>(c, 'approval', { messageId, approvalId, approved, ...(reason === undefined ? {} : { reason }) });

  it('records the first decision, shows it to every tab, delivers it to the stream runtime once; repeats ok, conflicts APPROVAL_DECIDED, other users not found', async () => {
    const rt = await runtime('p-appr');
    const [a, b] = [await tab('p-appr', 'u1'), await tab('p-appr', 'u1')];
    const stranger = await tab('p-appr', 'u2');
    const { id } = await ack<Ack>(rt.socket, 'stream:start', { to: 'u1' });
    expect(await ack<Ack>(rt.socket, 'stream:part', { id, part: askTool('ap1') })).toMatchObject({ ok: true, seq: 1, index: 0 });
    expect(await approve(stranger.socket, id!, 'ap1')).toMatchObject({ ok: false, error: { code: 'MESSAGE_NOT_FOUND' } });
    expect(await approve(a.socket, id!, 'nope')).toMatchObject({ ok: false, error: { code: 'MESSAGE_NOT_FOUND' } });
    const given = await approve(a.socket, id!, 'ap1', true, 'go');
    expect(given).toEqual({ ok: true, decision: { approved: true, reason: 'go', decidedBy: 'u1', ts: expect.any(String) } });
    for (const peer of [a, b]) {
      const shown = await peer.rec.wait<MessagePartEvent>('message:part', (p) => p.seq === 2);
      expect(shown).toMatchObject({
        id,
        index: 0,
        part: { state: 'approval-responded', approval: { id: 'ap1', approved: true, decidedBy: 'u1' } },
      });
    }
    expect(rt.approvals).toEqual([
      { id: 'ap1', messageId: id, toolCallId: 'call-ap1', from: 'u1', approved: true, reason: 'go', ts: given.ok && given.decision.ts },
    ]);
    expect(await approve(b.socket, id!, 'ap1', true)).toMatchObject({ ok: true, decision: { approved: true, reason: 'go' } });
    const conflict = await approve(b.socket, id!, 'ap1', false);
    expect(conflict).toMatchObject({ ok: false, error: { code: 'APPROVAL_DECIDED' }, decision: { approved: true, decidedBy: 'u1' } });
    expect(rt.approvals).toHaveLength(1);
    expect(stranger.rec.of('message:part')).toEqual([]);
    // The bot moves on; the final keeps the decision.
    expect(
      await ack<Ack>(rt.socket, 'stream:update', { id, index: 0, part: { state: 'output-available', output: { sent: true } } }),
    ).toMatchObject({
      ok: true,
      seq: 3,
    });
    await ack<Ack>(rt.socket, 'stream:end', { id });
    const end = await a.rec.wait<MessageEnd>('message:end');
    expect(end.parts?.[0]).toMatchObject({ state: 'output-available', approval: { id: 'ap1', approved: true } });
  });

  it('delivers a decision on an ended stream to the runtime that reconnected, once; history shows it; a reply asks too', async () => {
    const first = await runtime('p-appr-late');
    const a = await tab('p-appr-late', 'u1');
    const { id } = await ack<Ack>(first.socket, 'stream:start', { to: 'u1', parts: [askTool('ap2')] });
    first.socket.disconnect();
    await a.rec.wait<MessageEnd>('message:end', (e) => e.id === id);
    const again = await runtime('p-appr-late');
    expect(await approve(a.socket, id!, 'ap2', false, 'no')).toMatchObject({ ok: true, decision: { approved: false } });
    const shown = await a.rec.wait<MessagePartEvent>('message:part');
    expect(shown).toMatchObject({
      id,
      seq: 0,
      index: 0,
      part: { state: 'approval-responded', approval: { approved: false, reason: 'no' } },
    });
    expect(again.approvals).toMatchObject([{ id: 'ap2', messageId: id, approved: false, reason: 'no' }]);
    expect(await approve(a.socket, id!, 'ap2', false)).toMatchObject({ ok: true });
    expect(again.approvals).toHaveLength(1);
    expect((await history(a.socket)).find((m) => m.id === id)?.parts?.[0]).toMatchObject({
      state: 'approval-responded',
      approval: { approved: false },
    });
    // A plain reply may ask as well.
    const reply = await ack<Ack>(again.socket, 'reply', {
      to: 'u1',
      text: 'Send it?',
      parts: [{ type: 'text', text: 'Send it?' }, askTool('ap3')],
    });
    expect(await approve(a.socket, reply.id!, 'ap3')).toMatchObject({ ok: true });
    expect(again.approvals.map((x) => x.id)).toEqual(['ap2', 'ap3']);
  });

  it('answers AGENT_OFFLINE while no runtime takes a decision, keeps it, and delivers it on the retry', async () => {
    const rt = await runtime('p-appr-off');
    const a = await tab('p-appr-off', 'u1');
    const reply = await ack<Ack>(rt.socket, 'reply', { to: 'u1', text: '', parts: [askTool('ap4')] });
    rt.socket.disconnect();
    await sleep(50);
    expect(await approve(a.socket, reply.id!, 'ap4')).toMatchObject({ ok: false, error: { code: 'AGENT_OFFLINE' } });
    expect(await approve(a.socket, reply.id!, 'ap4', false)).toMatchObject({
      ok: false,
      error: { code: 'APPROVAL_DECIDED' },
      decision: { approved: true },
    });
    const back = await runtime('p-appr-off');
    expect(await approve(a.socket, reply.id!, 'ap4')).toMatchObject({ ok: true });
    expect(back.approvals).toMatchObject([{ id: 'ap4', approved: true }]);
  });

  it('delivers a decision made while no runtime was connected to the runtime that connects next, once, without a retry', async () => {
    const rt = await runtime('p-appr-later');
    const a = await tab('p-appr-later', 'u1');
    const { id } = await ack<Ack>(rt.socket, 'stream:start', { to: 'u1', parts: [askTool('ap6')] });
    rt.socket.disconnect();
    expect(await approve(a.socket, id!, 'ap6', false, 'not now')).toMatchObject({ ok: false, error: { code: 'AGENT_OFFLINE' } });
    const back = await runtime('p-appr-later');
    expect(await back.rec.wait<AgentApproval>('approval')).toMatchObject({
      id: 'ap6',
      messageId: id,
      toolCallId: 'call-ap6',
      from: 'u1',
      approved: false,
      reason: 'not now',
    });
    // Delivered and marked: the repeat is acked at once, and a runtime connecting later gets nothing.
    expect(await approve(a.socket, id!, 'ap6', false)).toMatchObject({ ok: true, decision: { approved: false } });
    const another = await runtime('p-appr-later');
    expect(await ack<Ack>(another.socket, 'reply', { to: 'u1', text: 'later' })).toMatchObject({ ok: true });
    expect([...back.approvals, ...another.approvals].map((x) => x.id)).toEqual(['ap6']);
  });
});

describe('approval expiry', () => {
  let short: TestHub;
  beforeAll(async () => {
    short = await startHub({ APPROVAL_TTL_S: '1' });
  });
  afterAll(() => short.close());

  it('refuses a decision on a message sent more than APPROVAL_TTL_S ago with APPROVAL_EXPIRED, recording nothing', async () => {
    const rt = await runtime('p-exp', short.url);
    const a = await tab('p-exp', 'u1', short.url);
    const reply = await ack<Ack>(rt.socket, 'reply', { to: 'u1', text: '', parts: [askTool('ap5')] });
    // Expiry is a matter of time passing: nothing to await but the clock.
    await sleep(1100);
    expect(await ack<ApprovalAck>(a.socket, 'approval', { messageId: reply.id, approvalId: 'ap5', approved: true })).toMatchObject({
      ok: false,
      error: { code: 'APPROVAL_EXPIRED' },
    });
    expect(rt.approvals).toEqual([]);
    expect(a.rec.of('message:part')).toEqual([]);
  });
});

describe('approvals without history (HISTORY_ENABLED=false)', () => {
  let bare: TestHub;
  beforeAll(async () => {
    bare = await startHub({ HISTORY_ENABLED: 'false' });
  });
  afterAll(() => bare.close());

  it('takes a decision while the stream that asked is open; after it ended, or on a reply, MESSAGE_NOT_FOUND says why, delivering nothing', async () => {
    const rt = await runtime('p-nohist', bare.url);
    const a = await tab('p-nohist', 'u1', bare.url);
    const open = await ack<Ack>(rt.socket, 'stream:start', { to: 'u1', parts: [askTool('h1'), askTool('h2')] });
    const decide = (messageId: string, approvalId: string) =>
      ack<ApprovalAck>(a.socket, 'approval', { messageId, approvalId, approved: true });
    expect(await decide(open.id!, 'h1')).toMatchObject({ ok: true, decision: { approved: true, decidedBy: 'u1' } });
    expect(await a.rec.wait<MessagePartEvent>('message:part')).toMatchObject({
      id: open.id,
      seq: 1,
      part: { state: 'approval-responded' },
    });
    expect(await ack<Ack>(rt.socket, 'stream:end', { id: open.id })).toMatchObject({ ok: true });
    const why = { ok: false, error: { code: 'MESSAGE_NOT_FOUND', message: expect.stringMatching(/HISTORY_ENABLED=false/) } };
    expect(await decide(open.id!, 'h2')).toMatchObject(why);
    const reply = await ack<Ack>(rt.socket, 'reply', { to: 'u1', text: '', parts: [askTool('h3')] });
    expect(await decide(reply.id!, 'h3')).toMatchObject(why);
    expect(rt.approvals.map((x) => x.id)).toEqual(['h1']);
    expect(a.rec.of('message:part')).toHaveLength(1);
  });
});
