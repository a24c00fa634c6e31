import type { UIMessageChunk } from '../../src/protocol/ui-message-chunk';
import { foldPartOps, UIMessagePartMapper, type PartOp } from '../../src/sdk/agent/ui-message-parts';
import { MOCK_ANSWER, mockUIMessageStream, readAll } from '../helpers/mock-model';

function mapAll(chunks: UIMessageChunk[]): { ops: PartOp[]; ends: unknown[] } {
  const mapper = new UIMessagePartMapper();
  const ops: PartOp[] = [];
  const ends: unknown[] = [];
  for (const chunk of chunks) {
    const effect = mapper.map(chunk);
    ops.push(...effect.ops);
    if (effect.end) ends.push(effect.end);
  }
  return { ops, ends };
}

describe('UIMessagePartMapper', () => {
  it("maps the AI SDK's own UI message stream (mock model: reasoning, text, source, tool calls) to the equivalent parts", async () => {
    const chunks = await readAll(mockUIMessageStream());
    const { ops, ends } = mapAll(chunks);
    expect(foldPartOps(ops)).toEqual([
      { type: 'reasoning', text: MOCK_ANSWER.reasoning },
      { type: 'text', text: MOCK_ANSWER.text },
      { type: 'source', sourceId: 'src_1', url: 'https://example.com/paris', title: 'Paris' },
      {
        type: 'tool',
        toolCallId: 'call_1',
        toolName: 'get_weather',
        state: 'output-available',
        inputText: JSON.stringify(MOCK_ANSWER.weatherInput),
        input: MOCK_ANSWER.weatherInput,
        output: MOCK_ANSWER.weatherOutput,
      },
      {
        type: 'tool',
        toolCallId: 'call_2',
        toolName: 'send_email',
        state: 'approval-requested',
        input: MOCK_ANSWER.emailInput,
        approval: { id: expect.any(String) },
      },
    ]);
    expect(ends).toEqual([{ status: 'complete' }]);
    // The tool's input streamed as it was written: two appends before it became available.
    const weather = ops.filter((op) => op.key === 'tool:call_1').map((op) => op.op);
    expect(weather).toEqual(['open', 'append', 'append', 'update', 'update']);
  });

  it('maps the chunks the mock model does not produce', () => {
    const { ops, ends } = mapAll([
      { type: 'start', messageId: 'm1' },
      { type: 'start-step' },
      { type: 'text-delta', id: 'late', delta: 'no text-start first' },
      { type: 'tool-input-error', toolCallId: 'c1', toolName: 'lookup', input: '{bad', errorText: 'invalid JSON' },
      { type: 'tool-input-available', toolCallId: 'c2', toolName: 'delete_all', input: {}, title: 'Delete everything' },
      { type: 'tool-approval-request', toolCallId: 'c2', approvalId: 'a2' },
      { type: 'tool-approval-response', approvalId: 'a2', approved: false },
      { type: 'tool-output-denied', toolCallId: 'c2' },
      { type: 'tool-input-start', toolCallId: 'c3', toolName: 'fetch' },
      { type: 'tool-output-error', toolCallId: 'c3', errorText: 'timed out' },
      { type: 'source-document', sourceId: 'd1', mediaType: 'application/pdf', title: 'Terms', filename: 'terms.pdf' },
      { type: 'file', url: 'https://example.com/chart.png', mediaType: 'image/png' },
      { type: 'file', url: 'data:image/png;base64,iVBORw0KGgo=', mediaType: 'image/png' },
      { type: 'reasoning-file', url: 'https://example.com/r.png', mediaType: 'image/png' },
      { type: 'data-weather', id: 'w1', data: { tempC: 18 } },
      { type: 'data-weather', id: 'w1', data: { tempC: 19 } },
      { type: 'data-progress', data: 50, transient: true },
      { type: 'data-note', data: 'no id' },
      { type: 'custom', kind: 'acme.thing' },
      { type: 'message-metadata', messageMetadata: { model: 'x' } },
      { type: 'finish-step' },
      { type: 'reset-step' },
      { type: 'steering-message', id: 's1', parts: [] },
      { type: 'abort', reason: 'user' },
    ]);
    expect(foldPartOps(ops)).toEqual([
      { type: 'text', text: 'no text-start first' },
      { type: 'tool', toolCallId: 'c1', toolName: 'lookup', state: 'output-error', input: '{bad', errorText: 'invalid JSON' },
      {
        type: 'tool',
        toolCallId: 'c2',
        toolName: 'delete_all',
        state: 'output-denied',
        input: {},
        title: 'Delete everything',
        approval: { id: 'a2' },
      },
      { type: 'tool', toolCallId: 'c3', toolName: 'fetch', state: 'output-error', inputText: '', errorText: 'timed out' },
      { type: 'source', sourceId: 'd1', title: 'Terms', mediaType: 'application/pdf', filename: 'terms.pdf' },
      { type: 'file', url: 'https://example.com/chart.png', mediaType: 'image/png' },
      { type: 'data', name: 'weather', id: 'w1', data: { tempC: 19 } },
      { type: 'data', name: 'note', data: 'no id' },
    ]);
    expect(ends).toEqual([{ status: 'cancelled', reason: 'user' }]);
  });

  it('an error chunk ends the answer in error', () => {
    expect(
      mapAll([
        { type: 'text-start', id: 't' },
        { type: 'error', errorText: 'rate limited by the model' },
      ]).ends,
    ).toEqual([{ status: 'error', errorText: 'rate limited by the model' }]);
  });

  it('refuses a data part name the hub would refuse, and a tool result for a call never started', () => {
    expect(() => mapAll([{ type: 'data-bad name', data: 1 }])).toThrow('data part name "bad name"');
    expect(() => mapAll([{ type: 'tool-output-available', toolCallId: 'nope', output: 1 }])).toThrow('tool:nope was never started');
    expect(() => mapAll([{ type: 'tool-input-delta', toolCallId: 'nope', inputTextDelta: '{' }])).toThrow('tool:nope');
  });
});
