import { streamText, tool, type UIMessageChunk } from 'ai';
import { convertArrayToReadableStream, MockLanguageModelV4 } from 'ai/test';
import { z } from 'zod';

/** What the mock model streams: reasoning, text, a source, a tool call that runs, one that asks approval. */
export const MOCK_ANSWER = {
  reasoning: 'The user wants the weather; call the tool.',
  text: 'Let me check the weather in Paris.',
  weatherInput: { city: 'Paris' },
  weatherOutput: { tempC: 18 },
  emailInput: { to: 'ana@example.com' },
};

const USAGE = {
  inputTokens: { total: 12, noCache: 12, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 30, text: 20, reasoning: 10 },
};

/**
 * The AI SDK's mock language model (`ai/test`) answering with reasoning, text, a URL source, a
 * `get_weather` call whose input streams in pieces (the tool runs), and a `send_email` call that
 * needs the user's approval; `delayMs` paces the model's parts.
 */
export function mockModel(delayMs?: number): MockLanguageModelV4 {
  const weatherJson = JSON.stringify(MOCK_ANSWER.weatherInput);
  const parts = [
    { type: 'stream-start', warnings: [] },
    { type: 'reasoning-start', id: 'r1' },
    { type: 'reasoning-delta', id: 'r1', delta: 'The user wants the weather; ' },
    { type: 'reasoning-delta', id: 'r1', delta: 'call the tool.' },
    { type: 'reasoning-end', id: 'r1' },
    { type: 'text-start', id: 't1' },
    { type: 'text-delta', id: 't1', delta: 'Let me check ' },
    { type: 'text-delta', id: 't1', delta: 'the weather in Paris.' },
    { type: 'text-end', id: 't1' },
    { type: 'source', sourceType: 'url', id: 'src_1', url: 'https://example.com/paris', title: 'Paris' },
    { type: 'tool-input-start', id: 'call_1', toolName: 'get_weather' },
    { type: 'tool-input-delta', id: 'call_1', delta: weatherJson.slice(0, 6) },
    { type: 'tool-input-delta', id: 'call_1', delta: weatherJson.slice(6) },
    { type: 'tool-input-end', id: 'call_1' },
    { type: 'tool-call', toolCallId: 'call_1', toolName: 'get_weather', input: weatherJson },
    { type: 'tool-call', toolCallId: 'call_2', toolName: 'send_email', input: JSON.stringify(MOCK_ANSWER.emailInput) },
    { type: 'finish', finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage: USAGE },
  ];
  return new MockLanguageModelV4({
    doStream: async () => ({
      stream:
        delayMs === undefined
          ? convertArrayToReadableStream(parts as never)
          : (await import('ai/test')).simulateReadableStream({ chunks: parts as never, chunkDelayInMs: delayMs }),
    }),
  });
}

/** `streamText` on the mock model with its two tools, as a UI message stream. */
export function mockUIMessageStream(options: { delayMs?: number; abortSignal?: AbortSignal } = {}): ReadableStream<UIMessageChunk> {
  const result = streamText({
    model: mockModel(options.delayMs),
    prompt: 'What is the weather in Paris? Then mail it to Ana.',
    abortSignal: options.abortSignal,
    tools: {
      get_weather: tool({
        description: 'The weather in a city',
        inputSchema: z.object({ city: z.string() }),
        execute: async () => MOCK_ANSWER.weatherOutput,
      }),
      send_email: tool({
        description: 'Sends an email',
        inputSchema: z.object({ to: z.string() }),
        needsApproval: true,
        execute: async () => ({ sent: true }),
      }),
    },
  });
  return result.toUIMessageStream({ sendSources: true });
}

/** Every chunk of a stream. */
export async function readAll<T>(stream: ReadableStream<T>): Promise<T[]> {
  const chunks: T[] = [];
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return chunks;
    chunks.push(value);
  }
}
