import { Events } from '../../src/protocol';
import type { RelayAgent } from '../../src/sdk/agent';
import { FakeAgentHub } from '../helpers/fake-agent-hub';
import { MOCK_ANSWER, mockUIMessageStream } from '../helpers/mock-model';

/** agent.streamUIMessage with the AI SDK's mock model, against a scripted Socket.IO hub that applies every part change. */
describe('agent SDK: streamUIMessage', () => {
  let hub: FakeAgentHub;
  let agent: RelayAgent;

  beforeEach(async () => {
    hub = await FakeAgentHub.start();
    agent = await hub.agent({ coalesceMs: 0 });
  });
  afterEach(async () => {
    agent.close();
    await hub.stop();
  });

  it("streams the mock model's reasoning, text, source and tool calls as the equivalent parts, and ends complete", async () => {
    const result = await agent.streamUIMessage('u1', mockUIMessageStream(), { replyTo: 'm1' });
    expect(result).toMatchObject({ status: 'complete' });
    const stream = hub.stream(result.id);
    expect(stream.start).toEqual({ to: 'u1', replyTo: 'm1' });
    expect(stream.parts).toEqual([
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
    // Text and reasoning grew by deltas at their part's index, not as whole parts re-sent.
    expect(stream.deltas.filter((d) => d.index === 1).map((d) => d.text)).toEqual(['Let me check ', 'the weather in Paris.']);
  });

  it('a stop from the hub cancels the UI message stream and ends the answer cancelled', async () => {
    const modelAbort = new AbortController();
    const source = mockUIMessageStream({ delayMs: 20, abortSignal: modelAbort.signal });
    const streaming = agent.streamUIMessage('u1', source);
    await hub.until(() => [...hub.streams.values()].some((s) => s.parts.some((p) => p.type === 'text')));
    const [id] = [...hub.streams.keys()];
    hub.last.emit(Events.stop, { id, from: 'u1' });
    const result = await streaming;
    expect(result.status).toBe('cancelled');
    expect(hub.stream(id).end).toMatchObject({ status: 'cancelled' });
    expect(hub.stream(id).parts.some((p) => p.type === 'tool')).toBe(false);
  });
});
