import type { StreamEndOptions } from '../../src/sdk/agent/agent-stream';
import type { HubPart } from '../../src/sdk/agent/ui-message-parts';
import { pipeUIMessageStream, type PartStream } from '../../src/sdk/agent/ui-message-stream';
import type { UIMessageChunk } from '../../src/protocol/ui-message-chunk';
import { MOCK_ANSWER, mockUIMessageStream } from '../helpers/mock-model';

/** A streamed answer that records what it is told, holding one part the bot wrote before. */
class RecordingStream implements PartStream {
  readonly controller = new AbortController();
  readonly parts: HubPart[] = [{ type: 'text', text: 'Before: ' }];
  ended: StreamEndOptions | undefined;
  onPart: (part: HubPart) => void = () => {};
  get signal(): AbortSignal {
    return this.controller.signal;
  }
  async part(part: HubPart): Promise<number> {
    this.parts.push({ ...part });
    this.onPart(part);
    return this.parts.length - 1;
  }
  async append(index: number, text: string): Promise<void> {
    const part = this.parts[index] as Record<string, unknown>;
    const key = part.type === 'tool' ? 'inputText' : 'text';
    part[key] = `${typeof part[key] === 'string' ? part[key] : ''}${text}`;
  }
  async update(index: number, fields: Record<string, unknown>): Promise<void> {
    Object.assign(this.parts[index], fields);
  }
  async end(options: StreamEndOptions = {}): Promise<{ id: string; ts: string }> {
    this.ended = options;
    return { id: 'm1', ts: '2026-12-01T00:00:00.000Z' };
  }
}

async function* chunks(list: UIMessageChunk[], thenThrow?: Error): AsyncGenerator<UIMessageChunk> {
  yield* list;
  if (thenThrow) throw thenThrow;
}

describe('pipeUIMessageStream', () => {
  it('writes the mock model answer as parts after the ones already there, and ends complete', async () => {
    const stream = new RecordingStream();
    const result = await pipeUIMessageStream(stream, mockUIMessageStream());
    expect(result).toEqual({ id: 'm1', ts: '2026-12-01T00:00:00.000Z', status: 'complete' });
    expect(stream.ended).toEqual({});
    expect(stream.parts.map((part) => part.type)).toEqual(['text', 'reasoning', 'text', 'source', 'tool', 'tool']);
    expect(stream.parts[1]).toEqual({ type: 'reasoning', text: MOCK_ANSWER.reasoning });
    expect(stream.parts[4]).toMatchObject({
      state: 'output-available',
      input: MOCK_ANSWER.weatherInput,
      output: MOCK_ANSWER.weatherOutput,
    });
  });

  it('a stop mid-answer ends it cancelled and cancels the model call', async () => {
    const stream = new RecordingStream();
    const modelAbort = new AbortController();
    let modelAborted = false;
    modelAbort.signal.addEventListener('abort', () => (modelAborted = true));
    // The user stops as soon as the text starts.
    stream.onPart = (part) => {
      if (part.type === 'text') stream.controller.abort();
    };
    const source = mockUIMessageStream({ delayMs: 5, abortSignal: modelAbort.signal });
    const reader = source.getReader();
    const result = await pipeUIMessageStream(stream, {
      [Symbol.asyncIterator]: () => ({
        next: async () => {
          const { done, value } = await reader.read();
          return done ? { done: true, value: undefined } : { done: false, value };
        },
        return: async () => {
          modelAbort.abort();
          await reader.cancel();
          return { done: true, value: undefined };
        },
      }),
    });
    expect(result.status).toBe('cancelled');
    expect(stream.ended).toEqual({ status: 'cancelled' });
    expect(modelAborted).toBe(true);
    expect(stream.parts.some((part) => part.type === 'tool')).toBe(false);
  });

  it('an error chunk ends the answer in error even when finish follows, with its text', async () => {
    const stream = new RecordingStream();
    const result = await pipeUIMessageStream(
      stream,
      chunks([
        { type: 'start' },
        { type: 'text-start', id: 't' },
        { type: 'text-delta', id: 't', delta: 'Half' },
        { type: 'error', errorText: 'the model is overloaded' },
        { type: 'finish' },
      ]),
    );
    expect(result).toMatchObject({ status: 'error', errorText: 'the model is overloaded' });
    expect(stream.ended).toEqual({ status: 'error' });
    expect(stream.parts[1]).toEqual({ type: 'text', text: 'Half' });
  });

  it('an abort chunk ends it cancelled; a source that throws ends it in error and rethrows', async () => {
    const aborted = new RecordingStream();
    expect((await pipeUIMessageStream(aborted, chunks([{ type: 'abort', reason: 'timeout' }]))).status).toBe('cancelled');
    const failing = new RecordingStream();
    await expect(pipeUIMessageStream(failing, chunks([{ type: 'text-start', id: 't' }], new Error('socket hang up')))).rejects.toThrow(
      'socket hang up',
    );
    expect(failing.ended).toEqual({ status: 'error' });
  });
});
