// The AI SDK's own chat state machine (AbstractChat from `ai`) through RelayChatTransport and two
// hub processes on one real Redis (docs/ai-sdk.md): an answer streams to the chat that asked and to a
// second chat of the same user on the other replica, stop ends it, and a chat opened mid-answer
// (a reload) resumes it from the hub's snapshot with nothing doubled.
import { lastAssistantMessageIsCompleteWithApprovalResponses, type UIMessage, type UIMessageChunk } from 'ai';
import type { AgentApproval, AgentInboundMessage } from '../../src/protocol';
import type { RelayAgent } from '../../src/sdk/agent';
import { RelayChatTransport } from '../../sdk/browser/src/ai-sdk';
import { PlainChat, textOf } from '../helpers/ai-chat';
import { startTestCluster, type TestCluster } from '../helpers/cluster';
import { MOCK_ANSWER, mockUIMessageStream } from '../helpers/mock-model';

let cluster: TestCluster;
let R: string[];
let agent: RelayAgent;
/** What the bot does with the next message; set by each test. */
let answer: (m: AgentInboundMessage, signal: AbortSignal) => Promise<void>;
/** What the bot does with a user's decision; set by the test that approves. */
let decided: (a: AgentApproval) => Promise<void> = async () => {};

beforeAll(async () => {
  cluster = await startTestCluster({ STREAM_STOP_GRACE_MS: '2000' }, 2);
  R = cluster.handle.replicas.map((r) => r.url);
  agent = await cluster.agent(R[0], 'ai-bot');
  agent.onMessage((m, { signal }) => answer(m, signal));
  agent.onApproval((a) => decided(a));
}, 60_000);
afterAll(() => cluster?.close(), 60_000);

const transports: RelayChatTransport[] = [];
afterEach(() => {
  for (const transport of transports.splice(0)) transport.close();
});

/** An AI SDK chat of user `sub` on replica `url`, kept in step with the user's other tabs. */
async function openChat(url: string, sub: string, messages?: (t: RelayChatTransport) => Promise<UIMessage[]>): Promise<PlainChat> {
  const transport = new RelayChatTransport({ chat: await cluster.chat(url, 'ai-bot', { sub }) });
  transports.push(transport);
  const chat = new PlainChat({
    transport,
    messages: messages ? await messages(transport) : [],
    sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
  });
  transport.attach(chat);
  return chat;
}

/** A promise and the function that settles it: the bot waits on it mid-answer. */
function gate(): { wait: Promise<void>; open: () => void } {
  let open!: () => void;
  const wait = new Promise<void>((resolve) => (open = resolve));
  return { wait, open };
}

const assistant = (chat: PlainChat) => chat.messages.filter((m) => m.role === 'assistant');
const roles = (chat: PlainChat) => chat.messages.map((m) => m.role);

it('a message sent from one chat streams its answer there and to a second chat of the same user on the other replica', async () => {
  const midway = gate();
  answer = async (m) => {
    const s = await agent.stream(m.from, { replyTo: m.id });
    await s.write('Hello ');
    await midway.wait;
    await s.write('from the hub.');
    await s.end();
  };
  const first = await openChat(R[0], 'u-send');
  const second = await openChat(R[1], 'u-send');
  const sending = first.sendMessage({ text: 'hi' });
  await first.until((c) => c.status === 'streaming' && textOf(assistant(c)[0]) === 'Hello ', 15_000, 'the first half in the first chat');
  await second.until((c) => textOf(assistant(c)[0]) === 'Hello ', 15_000, 'the first half in the second chat');
  midway.open();
  await sending;
  await first.until((c) => c.status === 'ready' && textOf(assistant(c)[0]) === 'Hello from the hub.');
  await second.until((c) => c.status === 'ready' && textOf(assistant(c)[0]) === 'Hello from the hub.');
  // One user message and one answer in each: nothing doubled, the same ids (the hub's).
  expect(roles(first)).toEqual(['user', 'assistant']);
  expect(roles(second)).toEqual(['user', 'assistant']);
  expect(assistant(second)[0].id).toBe(assistant(first)[0].id);
  expect(textOf(second.messages[0])).toBe('hi');
});

it("the chat's stop ends the answer on the hub: the bot's signal aborts and the answer ends cancelled", async () => {
  const ended = gate();
  let botStatus: string | undefined;
  answer = async (m, signal) => {
    const s = await agent.stream(m.from, { replyTo: m.id });
    await s.write('Thinking about it');
    await new Promise((resolve) => s.signal.addEventListener('abort', resolve, { once: true }));
    expect(signal.aborted).toBe(true);
    await s.end();
    botStatus = 'cancelled';
    ended.open();
  };
  const chat = await openChat(R[1], 'u-stop');
  const other = await openChat(R[0], 'u-stop');
  void chat.sendMessage({ text: 'think' });
  await chat.until((c) => textOf(assistant(c)[0]) === 'Thinking about it', 15_000, 'the answer to start');
  await chat.stop();
  await ended.wait;
  expect(botStatus).toBe('cancelled');
  await chat.until((c) => c.status === 'ready');
  expect(textOf(assistant(chat)[0])).toBe('Thinking about it');
  await other.until((c) => c.status === 'ready' && textOf(assistant(c)[0]) === 'Thinking about it', 15_000, 'the other tab to see the end');
});

it('a chat opened mid-answer on the other replica (a reload) resumes it from the snapshot: nothing doubled, nothing skipped', async () => {
  const midway = gate();
  answer = async (m) => {
    const s = await agent.stream(m.from, { replyTo: m.id });
    for (const word of ['One ', 'two ', 'three ']) await s.write(word);
    await midway.wait;
    for (const word of ['four ', 'five.']) await s.write(word);
    await s.end();
  };
  const asking = await openChat(R[0], 'u-reload');
  void asking.sendMessage({ text: 'count' });
  await asking.until((c) => textOf(assistant(c)[0]) === 'One two three ', 15_000, 'the first three words');
  // The reload: history as initial messages (the open answer left out), then the AI SDK's resume.
  const reloaded = await openChat(R[1], 'u-reload', (t) => t.loadMessages());
  expect(roles(reloaded)).toEqual(['user']);
  // resumeStream() settles when the answer has ended, which it has not yet.
  const resuming = reloaded.resumeStream();
  await reloaded.until((c) => textOf(assistant(c)[0]) === 'One two three ', 15_000, 'the snapshot');
  midway.open();
  await resuming;
  await reloaded.until((c) => c.status === 'ready' && textOf(assistant(c)[0]) === 'One two three four five.');
  expect(roles(reloaded)).toEqual(['user', 'assistant']);
  await asking.until((c) => c.status === 'ready' && textOf(assistant(c)[0]) === 'One two three four five.');
});

/** The mock model's UI message stream, held after its first text delta until `wait` settles. */
async function* heldAfterFirstText(wait: Promise<void>, signal: AbortSignal): AsyncGenerator<UIMessageChunk> {
  const reader = mockUIMessageStream({ abortSignal: signal }).getReader();
  let held = false;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    yield value;
    if (!held && value.type === 'text-delta') {
      held = true;
      await wait;
    }
  }
}

/** An assistant message without what differs by construction (undefined fields, the AI SDK's ids of streamed text parts). */
function comparable(message: UIMessage | undefined): unknown {
  const plain = JSON.parse(JSON.stringify(message)) as { parts: Array<Record<string, unknown>> };
  for (const part of plain.parts) {
    delete part.id;
    if (part.state === 'streaming') part.state = 'done';
  }
  return plain;
}

it("the AI SDK bot's answer (reasoning, text, a source, tool calls) streams as parts to both chats, a reload mid-answer resumes it, and an approval reaches the bot", async () => {
  const midway = gate();
  answer = async (m, signal) => {
    const { status } = await agent.streamUIMessage(m.from, heldAfterFirstText(midway.wait, signal), { replyTo: m.id });
    expect(status).toBe('complete');
  };
  const first = await openChat(R[0], 'u-parts');
  const second = await openChat(R[1], 'u-parts');
  const sending = first.sendMessage({ text: 'weather, then mail Ana' });
  await first.until((c) => textOf(assistant(c)[0]) === 'Let me check ', 15_000, 'the first text delta');
  expect(assistant(first)[0].parts[0]).toMatchObject({ type: 'reasoning', text: MOCK_ANSWER.reasoning });
  await second.until((c) => textOf(assistant(c)[0]) === 'Let me check ', 15_000, 'the second chat to follow');
  const reloaded = await openChat(R[1], 'u-parts', (t) => t.loadMessages());
  const resuming = reloaded.resumeStream();
  await reloaded.until((c) => textOf(assistant(c)[0]) === 'Let me check ', 15_000, 'the snapshot after the reload');
  midway.open();
  await sending;
  await resuming;
  for (const chat of [first, second, reloaded]) {
    await chat.until(
      (c) => c.status === 'ready' && assistant(c)[0]?.parts.some((p) => p.type === 'dynamic-tool' && p.state === 'approval-requested'),
    );
  }
  const final = assistant(first)[0];
  expect(final.parts.map((p) => (p.type === 'dynamic-tool' ? `${p.toolName}:${p.state}` : p.type))).toEqual([
    'reasoning',
    'text',
    'source-url',
    'get_weather:output-available',
    'send_email:approval-requested',
  ]);
  expect(final.parts[3]).toMatchObject({ input: MOCK_ANSWER.weatherInput, output: MOCK_ANSWER.weatherOutput });
  // The same answer in every chat, once: nothing doubled by the resume or the second replica.
  expect(comparable(assistant(second)[0])).toEqual(comparable(final));
  expect(comparable(assistant(reloaded)[0])).toEqual(comparable(final));
  expect(assistant(reloaded)).toHaveLength(1);
  expect(textOf(final)).toBe(MOCK_ANSWER.text);

  // The user approves the mail in the first chat: the hub hands the decision to the bot, whose
  // reply continues the answer in that chat.
  const approval = gate();
  let seen: AgentApproval | undefined;
  decided = async (a) => {
    seen = a;
    await agent.reply(a.from, 'Sent to Ana.');
    approval.open();
  };
  const tool = final.parts[4] as { approval: { id: string } };
  await first.addToolApprovalResponse({ id: tool.approval.id, approved: true });
  await approval.wait;
  expect(seen).toMatchObject({ messageId: final.id, id: tool.approval.id, approved: true, toolCallId: 'call_2' });
  await first.until((c) => c.status === 'ready' && textOf(assistant(c)[0]).endsWith('Sent to Ana.'), 15_000, 'the reply to the approval');
  expect(assistant(first)).toHaveLength(1);
  expect(assistant(first)[0].id).toBe(final.id);
  // The other chat sees the decision on the ended answer, and the bot's reply.
  await second.until(
    (c) => assistant(c)[0].parts.some((p) => p.type === 'dynamic-tool' && p.state === 'approval-responded'),
    15_000,
    'the decision in the second chat',
  );
  await second.until((c) => textOf(assistant(c)[1]) === 'Sent to Ana.', 15_000, "the bot's reply in the second chat");
}, 60_000);

it("a chat whose connection drops mid-answer picks the answer up again on reconnect: the AI SDK's message grows on, nothing doubled", async () => {
  const midway = gate();
  answer = async (m) => {
    const s = await agent.stream(m.from, { replyTo: m.id });
    await s.write('Before the drop, ');
    await midway.wait;
    await s.write('after it.');
    await s.end();
  };
  const chat = await openChat(R[1], 'u-drop');
  const transport = transports[transports.length - 1];
  void chat.sendMessage({ text: 'go' });
  await chat.until((c) => textOf(assistant(c)[0]) === 'Before the drop, ', 15_000, 'the first half');
  // The tab's connection drops (a network change): RelayChat reconnects on its own, and the hub
  // sends the answer's snapshot, which the transport diffs against what the chat holds.
  const reconnected = new Promise<void>((resolve) => {
    const off = transport.chat.on('state', ({ state }) => state === 'connected' && (off(), resolve()));
  });
  (transport.chat as unknown as { socket: { disconnect(): void } }).socket.disconnect();
  await reconnected;
  midway.open();
  await chat.until((c) => c.status === 'ready' && textOf(assistant(c)[0]) === 'Before the drop, after it.');
  expect(roles(chat)).toEqual(['user', 'assistant']);
  expect(assistant(chat)[0].parts.filter((p) => p.type === 'text')).toHaveLength(1);
});
