import type { AgentApproval, AgentInboundMessage, MessageEnd, MessagePart, ToolPart } from '../../src/protocol';
import { RelayAgent } from '../../src/sdk/agent';
import { RelayChat, type MessageUpdate } from '../../sdk/browser/src';
import { nextChatEvent } from '../helpers/fake-client-hub';
import { startHub, type TestHub } from '../helpers/hub';
import { mintToken, TEST_AGENT_KEY } from '../helpers/tokens';
import { WEATHER_PARTS } from '../fixtures/answers';

/** The three SDKs' parts end to end: the agent SDK streams them through a real hub to the browser SDK, which approves. */
describe('parts and approvals: agent SDK → hub → browser SDK', () => {
  let t: TestHub;
  const closers: Array<() => void> = [];
  beforeAll(async () => {
    t = await startHub();
  });
  afterAll(async () => {
    for (const close of closers) close();
    await t.close();
  });

  let n = 0;
  /** A fresh bot with one runtime, and a browser chat of user u1 with it. */
  async function pair(): Promise<{ agent: RelayAgent; chat: RelayChat; agentId: string }> {
    const agentId = `sdk-parts-${++n}`;
    const agent = new RelayAgent({ url: t.url, apiKey: TEST_AGENT_KEY, agentId, coalesceMs: 5 });
    closers.push(() => agent.close());
    await agent.connect();
    const chat = new RelayChat({ url: t.url, agentId, token: mintToken({ sub: 'u1' }), persist: false });
    closers.push(() => chat.close());
    await nextChatEvent(chat, 'state', (s) => s.state === 'connected');
    return { agent, chat, agentId };
  }

  it('streams every part type in order; the tab holds the whole message as it grows, and history has the parts', async () => {
    const { agent, chat } = await pair();
    const updates: MessageUpdate[] = [];
    chat.on('message:update', (u) => updates.push(u));

    const s = await agent.stream('u1');
    await s.write('Let me ');
    const thinking = s.reasoning();
    await thinking.write('The user wants ');
    await thinking.write('the weather.');
    await s.write('check. ');
    const call = s.tool({ toolName: 'get_weather', toolCallId: 'call_1', title: 'Weather in Paris' });
    await call.writeInput('{"city":');
    await call.writeInput('"Paris"}');
    await call.inputAvailable();

    await call.output({ celsius: 21 });
    await s.write('It is 21 °C.');
    await s.source({ sourceId: 's1', url: 'https://example.com/paris', title: 'Forecast' });
    await s.file({ url: 'https://example.com/map.png', mediaType: 'image/png' });
    await s.data('forecast', { days: [21, 23] }, 'f1');
    await s.suggest(['Tomorrow?']);
    const ended = nextChatEvent(chat, 'message:end', (m) => m.id === s.id);
    await s.end();
    const end: MessageEnd = await ended;

    const expected: MessagePart[] = [...WEATHER_PARTS, { type: 'suggestions', items: [{ text: 'Tomorrow?' }] }];
    expect(end).toMatchObject({ text: 'Let me check. It is 21 °C.', status: 'complete' });
    expect(end.parts).toEqual(expected);
    // What the tab built from the changes is what the hub ended with; seq counted every change once.
    const last = updates.filter((u) => u.id === s.id).pop()!;
    expect(last.parts).toEqual(expected);
    expect(last.text).toBe(end.text);
    const seqs = updates.filter((u) => u.id === s.id).map((u) => u.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(new Set(seqs).size).toBe(seqs.length);
    const page = await chat.history();
    expect(page.messages.find((m) => m.id === s.id)?.parts).toEqual(expected);
  });

  it('asks for approval in a stream: the tab decides, every part of the answer shows it, the bot gets it once and goes on', async () => {
    const { agent, chat } = await pair();
    const approvals: AgentApproval[] = [];
    agent.onApproval((a) => void approvals.push(a));
    const s = await agent.stream('u1');
    await s.write('Shall I refund order 42? ');
    const call = s.tool({ toolName: 'refund', toolCallId: 'call_1' });
    await call.inputAvailable({ order: 42 });
    const asking = nextChatEvent(chat, 'message:update', (u) => toolOf(u)?.state === 'approval-requested');
    const approvalId = await call.requestApproval();
    expect((await asking).text).toBe('Shall I refund order 42? ');

    const responded = nextChatEvent(chat, 'message:update', (u) => toolOf(u)?.state === 'approval-responded');
    const decision = await chat.approve(s.id, approvalId, true, 'go ahead');
    expect(decision).toEqual({ approved: true, reason: 'go ahead', decidedBy: 'u1', ts: expect.any(String) });
    await expect(call.decision()).resolves.toMatchObject({
      id: approvalId,
      messageId: s.id,
      toolCallId: 'call_1',
      from: 'u1',
      approved: true,
    });
    expect(toolOf(await responded)?.approval).toEqual({
      id: approvalId,
      approved: true,
      reason: 'go ahead',
      decidedBy: 'u1',
      ts: decision.ts,
    });

    await call.output({ refunded: true });
    const ended = nextChatEvent(chat, 'message:end', (m) => m.id === s.id);
    await s.end();
    expect(toolOf(await ended)).toMatchObject({ state: 'output-available', output: { refunded: true }, approval: { approved: true } });
    await chat.history({ limit: 1 }); // a round trip: a second delivery would have arrived by now
    expect(approvals.map((a) => a.id)).toEqual([approvalId]);
  });

  it('decides after the stream ended: the runtime gets it once, the tab gets the part, a conflicting decision is refused', async () => {
    const { agent, chat } = await pair();
    const approvals: AgentApproval[] = [];
    agent.onApproval((a) => void approvals.push(a));
    const s = await agent.stream('u1');
    const call = s.tool({ toolName: 'refund' });
    await call.inputAvailable({ order: 42 });
    const approvalId = await call.requestApproval();
    await s.write('Shall I?');
    const ended = nextChatEvent(chat, 'message:end', (m) => m.id === s.id);
    await s.end();
    await ended;

    const changed = nextChatEvent(chat, 'message:part', (p) => p.id === s.id);
    await expect(chat.approve(s.id, approvalId, false, 'no')).resolves.toMatchObject({ approved: false, reason: 'no' });
    const part = await changed;
    expect(part).toMatchObject({
      id: s.id,
      seq: 0,
      index: 0,
      part: { state: 'approval-responded', approval: { id: approvalId, approved: false } },
    });
    await expect(call.decision()).resolves.toMatchObject({ id: approvalId, approved: false, reason: 'no' });
    // The same decision again is fine; another one is refused with what was recorded.
    await expect(chat.approve(s.id, approvalId, false, 'no')).resolves.toMatchObject({ approved: false });
    await expect(chat.approve(s.id, approvalId, true)).rejects.toMatchObject({ code: 'APPROVAL_DECIDED' });
    await expect(chat.approve(s.id, 'no-such-approval', true)).rejects.toMatchObject({ code: 'MESSAGE_NOT_FOUND' });
    await chat.history({ limit: 1 }); // a round trip: a second delivery would have arrived by now
    expect(approvals.map((a) => [a.id, a.approved])).toEqual([[approvalId, false]]);
  });

  it('hands a decision given after the runtime restarted to the new runtime, once', async () => {
    const { agent, chat, agentId } = await pair();
    const s = await agent.stream('u1');
    const call = s.tool({ toolName: 'deploy' });
    await call.inputAvailable({ env: 'prod' });
    const approvalId = await call.requestApproval();
    const ended = nextChatEvent(chat, 'message:end', (m) => m.id === s.id);
    await s.end();
    await ended;
    agent.close();

    const restarted = new RelayAgent({ url: t.url, apiKey: TEST_AGENT_KEY, agentId });
    closers.push(() => restarted.close());
    const approvals: AgentApproval[] = [];
    const delivered = new Promise<void>((resolve) =>
      restarted.onApproval((a) => {
        approvals.push(a);
        resolve();
      }),
    );
    await restarted.connect();
    await chat.approve(s.id, approvalId, true);
    await delivered;
    await chat.history({ limit: 1 });
    expect(approvals).toEqual([
      expect.objectContaining({ id: approvalId, messageId: s.id, toolCallId: call.toolCallId, from: 'u1', approved: true }),
    ]);
  });

  it('replies with parts, and a user sends file parts to the bot', async () => {
    const { agent, chat } = await pair();
    const received: AgentInboundMessage[] = [];
    agent.onMessage((m) => void received.push(m));
    const file: MessagePart = { type: 'file', url: 'https://example.com/cv.pdf', mediaType: 'application/pdf', filename: 'cv.pdf' };
    await chat.send('my cv', { parts: [file], data: { k: 1 } });
    expect(received).toEqual([expect.objectContaining({ text: 'my cv', data: { k: 1 }, parts: [{ type: 'text', text: 'my cv' }, file] })]);

    const shown = nextChatEvent(chat, 'message', (m) => m.author === 'agent');
    const parts: MessagePart[] = [
      { type: 'text', text: 'See ' },
      { type: 'source', sourceId: '1', url: 'https://example.com/a' },
      { type: 'text', text: 'the docs.' },
    ];
    await agent.reply('u1', { parts });
    expect(await shown).toMatchObject({ text: 'See the docs.', parts });
  });

  it('ends a stream with parts that replace what it streamed', async () => {
    const { agent, chat } = await pair();
    const s = await agent.stream('u1');
    await s.write('draft');
    s.reasoning('thinking');
    const parts: MessagePart[] = [
      { type: 'text', text: 'Final answer.' },
      { type: 'source', sourceId: '1', url: 'https://example.com/a' },
    ];
    const ended = nextChatEvent(chat, 'message:end', (m) => m.id === s.id);
    await s.end({ parts });
    expect(await ended).toMatchObject({ text: 'Final answer.', parts, status: 'complete' });
  });

  it('refuses a bad part with its code and the tab sees nothing of it', async () => {
    const { agent, chat } = await pair();
    const s = await agent.stream('u1');
    await s.write('before');
    await expect(s.file({ url: 'javascript:alert(1)', mediaType: 'text/html' })).rejects.toMatchObject({ code: 'INVALID_PAYLOAD' });
    await expect(s.write('after')).rejects.toMatchObject({ code: 'INVALID_PAYLOAD' });
    const ended = nextChatEvent(chat, 'message:end', (m) => m.id === s.id);
    await s.end({ status: 'error' });
    const end: MessageEnd = await ended;
    expect(end).toMatchObject({ text: 'before', status: 'error' });
    expect(end.parts).toBeUndefined();
  });
});

function toolOf(m: { parts?: MessagePart[] }): ToolPart | undefined {
  return m.parts?.find((p): p is ToolPart => p.type === 'tool');
}
