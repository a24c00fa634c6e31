import { readUIMessageStream, type ChatTransport, type UIMessage, type UIMessageChunk as AiChunk } from 'ai';
import type { MessagePart } from '../../../src/protocol';
import { MessageChunker, type RelayChatTransport, toUIMessage, type RelayUIMessage } from '../src/ai-sdk';
import type { UIMessageChunk } from '../src/ai-sdk';

// Compile-time: the transport is an AI SDK ChatTransport, its messages are UIMessages.
export type IsTransport = RelayChatTransport extends ChatTransport<UIMessage> ? true : never;
export const isTransport: IsTransport = true;
export const isMessage = (m: RelayUIMessage): UIMessage => m;

/** The message the AI SDK's own stream processing builds from `chunks`. */
async function aiMessage(chunks: UIMessageChunk[]): Promise<UIMessage | undefined> {
  const stream = new ReadableStream<AiChunk>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      controller.close();
    },
  });
  let last: UIMessage | undefined;
  for await (const message of readUIMessageStream({ stream })) last = structuredClone(message);
  return last;
}

const tool = (state: string, extra: Record<string, unknown> = {}): MessagePart =>
  ({ type: 'tool', toolCallId: 'call_1', toolName: 'send_email', state, ...extra }) as MessagePart;

/** A streamed answer as the hub holds it at each step: reasoning, text, a tool call through approval to output, a source, data. */
const STEPS: MessagePart[][] = [
  [{ type: 'reasoning', text: 'Mail Ana' }],
  [{ type: 'reasoning', text: 'Mail Ana the forecast.' }],
  [
    { type: 'reasoning', text: 'Mail Ana the forecast.' },
    { type: 'text', text: 'Sending' },
  ],
  [
    { type: 'reasoning', text: 'Mail Ana the forecast.' },
    { type: 'text', text: 'Sending it now.' },
    tool('input-streaming', { inputText: '{"to":"an' }),
  ],
  [
    { type: 'reasoning', text: 'Mail Ana the forecast.' },
    { type: 'text', text: 'Sending it now.' },
    tool('approval-requested', { inputText: '{"to":"ana"}', input: { to: 'ana' }, approval: { id: 'ap_1' } }),
  ],
  [
    { type: 'reasoning', text: 'Mail Ana the forecast.' },
    { type: 'text', text: 'Sending it now.' },
    tool('output-available', {
      inputText: '{"to":"ana"}',
      input: { to: 'ana' },
      approval: { id: 'ap_1', approved: true },
      output: { sent: true },
    }),
    { type: 'source', sourceId: 's1', url: 'https://example.com/forecast', title: 'Forecast' },
    { type: 'data', name: 'weather', id: 'w', data: { tempC: 18 } },
  ],
];

describe('MessageChunker', () => {
  it("a streamed answer's successive states become chunks from which the AI SDK builds the same message as history shows", async () => {
    const chunker = new MessageChunker('m1');
    const chunks = [...chunker.start({ text: '', parts: STEPS[0] })];
    for (const parts of STEPS.slice(1, -1)) chunks.push(...chunker.update({ text: '', parts }));
    const final = STEPS[STEPS.length - 1];
    chunks.push(...chunker.end({ text: 'Sending it now.', parts: final, status: 'complete' }));
    const built = await aiMessage(chunks);
    const history = toUIMessage({ id: 'm1', ts: '', agentId: 'bot', author: 'agent', text: 'Sending it now.', parts: final });
    expect(comparable(built)).toEqual(comparable(history));
    // Text grew by deltas, never by a repeat.
    const deltas = chunks.filter((c) => c.type === 'text-delta').map((c) => (c as { delta: string }).delta);
    expect(deltas).toEqual(['Sending', ' it now.']);
    expect(chunks[chunks.length - 1]).toEqual({ type: 'finish' });
  });

  it('a resume replays the snapshot as one start: nothing is doubled', async () => {
    const first = new MessageChunker('m1');
    const before = [...first.start({ text: '', parts: STEPS[2] })];
    // The reconnect's snapshot holds more than was seen; a new chunker starts over from it.
    const resumed = new MessageChunker('m1');
    const after = [...resumed.start({ text: '', parts: STEPS[3] }), ...resumed.end({ text: '', parts: STEPS[3], status: 'complete' })];
    expect(before.length).toBeGreaterThan(0);
    const built = await aiMessage(after);
    expect(built?.parts.find((p) => p.type === 'text')).toMatchObject({ text: 'Sending it now.' });
    expect(built?.parts.filter((p) => p.type === 'reasoning')).toHaveLength(1);
  });

  it('a plain text answer (no parts) streams as one text part; how it ended becomes finish, abort or error', async () => {
    const chunker = new MessageChunker('m2');
    const chunks = [...chunker.start({ text: '' }), ...chunker.update({ text: 'Hel' }), ...chunker.update({ text: 'Hello' })];
    expect(chunker.end({ text: 'Hello', status: 'cancelled' })).toEqual([
      { type: 'text-end', id: 'm2:0' },
      { type: 'abort', reason: 'stopped' },
    ]);
    expect((await aiMessage(chunks))?.parts).toEqual([{ type: 'text', text: 'Hello', state: 'streaming' }]);
    const failed = new MessageChunker('m3');
    failed.start({ text: 'x' });
    expect(failed.end({ text: 'x', status: 'interrupted' }).pop()).toEqual({ type: 'error', errorText: 'the answer ended: interrupted' });
  });

  it('a denied approval becomes the approval response then output-denied', () => {
    const chunker = new MessageChunker('m4');
    chunker.start({ text: '', parts: [tool('approval-requested', { input: {}, approval: { id: 'a' } })] });
    expect(
      chunker.update({ text: '', parts: [tool('output-denied', { input: {}, approval: { id: 'a', approved: false, reason: 'no' } })] }),
    ).toEqual([
      { type: 'tool-approval-response', approvalId: 'a', approved: false, reason: 'no' },
      { type: 'tool-output-denied', toolCallId: 'call_1' },
    ]);
  });
});

/** A message without undefined fields, and without the ids the AI SDK gives the text parts it streamed. */
function comparable(message: UIMessage | RelayUIMessage | undefined): unknown {
  const plain = JSON.parse(JSON.stringify(message)) as { parts: Array<Record<string, unknown>> };
  for (const part of plain.parts) if (part.type === 'text' || part.type === 'reasoning') delete part.id;
  return plain;
}
