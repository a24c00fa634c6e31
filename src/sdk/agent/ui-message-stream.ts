import type { AgentStreamStatus } from '../../protocol';
import type { UIMessageChunk } from '../../protocol/ui-message-chunk';
import type { StreamEndOptions } from './agent-stream';
import type { StreamResult } from './stream-from';
import { UIMessagePartMapper, type HubPart, type UIStreamEnd } from './ui-message-parts';

/** What {@link pipeUIMessageStream} needs of a streamed answer: its part operations, its end and its stop. */
export interface PartStream {
  readonly signal: AbortSignal;
  /** Appends a part; resolves with its index in the message. */
  part(part: HubPart): Promise<number>;
  /** Appends text to part `index` (a text or reasoning part's text, a tool part's raw input). */
  append(index: number, text: string): Promise<void>;
  /** Merges fields into part `index`. */
  update(index: number, fields: Record<string, unknown>): Promise<void>;
  end(options?: StreamEndOptions): Promise<{ id: string; ts: string }>;
}

/** What `streamUIMessage` resolves with: the message, how it ended, and the UI stream's error text when it ended in error. */
export interface UIMessageStreamResult extends StreamResult {
  errorText?: string;
}

/** A UI message stream: what `toUIMessageStream()` returns, or any async iterable of its chunks. */
export type UIMessageSource = ReadableStream<UIMessageChunk> | AsyncIterable<UIMessageChunk>;

/**
 * Applies every chunk of an AI SDK UI message stream to `stream` as parts (docs/agent-sdk.md#ai-sdk-ui-message-streams)
 * and ends it: `complete` after `finish` or when the source is done, `cancelled` after `abort` or
 * when the user stopped the answer (the source is cancelled, which aborts `streamText`), `error`
 * after an `error` chunk or when the source throws (rethrown after the end).
 */
export async function pipeUIMessageStream(stream: PartStream, source: UIMessageSource): Promise<UIMessageStreamResult> {
  const iterator = chunksOf(source);
  const mapper = new UIMessagePartMapper();
  const indexes = new Map<string, number>();
  let onAbort: () => void = () => {};
  // A pending read can take as long as the model does; a stop must not wait for it.
  const aborted = new Promise<'aborted'>((resolve) => (onAbort = () => resolve('aborted')));
  if (stream.signal.aborted) onAbort();
  else stream.signal.addEventListener('abort', onAbort, { once: true });
  let said: UIStreamEnd | undefined;
  let failure: unknown;
  let failed = false;
  try {
    for (;;) {
      const next = await Promise.race([iterator.next(), aborted]);
      if (next === 'aborted' || next.done) break;
      const effect = mapper.map(next.value);
      for (const op of effect.ops) {
        if (op.op === 'open') {
          indexes.set(op.key, await stream.part(op.part));
          continue;
        }
        const index = indexes.get(op.key)!;
        if (op.op === 'append') await stream.append(index, op.text);
        else await stream.update(index, op.fields);
      }
      // An error stays the answer's end even when the AI SDK sends `finish` after it.
      if (effect.end && said?.status !== 'error') said = effect.end;
    }
  } catch (err) {
    failed = true;
    failure = err;
  } finally {
    stream.signal.removeEventListener('abort', onAbort);
  }
  if (stream.signal.aborted || failed) void Promise.resolve(iterator.return?.()).catch(() => {});
  const status: AgentStreamStatus =
    failed || said?.status === 'error' ? 'error' : stream.signal.aborted ? 'cancelled' : (said?.status ?? 'complete');
  let ended: { id: string; ts: string };
  try {
    ended = await stream.end(status === 'complete' ? {} : { status });
  } catch (endError) {
    throw failed ? failure : endError;
  }
  if (failed) throw failure;
  return { ...ended, status, ...(said?.status === 'error' ? { errorText: said.errorText } : {}) };
}

/** The chunks of a ReadableStream (whose reader is released and the stream cancelled on `return()`) or an async iterable. */
function chunksOf(source: UIMessageSource): AsyncIterator<UIMessageChunk> {
  if (!isReadableStream(source)) return source[Symbol.asyncIterator]();
  const reader = source.getReader();
  return {
    next: async () => {
      const { done, value } = await reader.read();
      return done ? { done: true, value: undefined } : { done: false, value };
    },
    return: async () => {
      await reader.cancel();
      return { done: true, value: undefined };
    },
  };
}

// Node's ReadableStream is async iterable too, but a browser's or a polyfill's may not be: read it by its reader.
function isReadableStream(source: UIMessageSource): source is ReadableStream<UIMessageChunk> {
  return typeof (source as Partial<ReadableStream<UIMessageChunk>>).getReader === 'function';
}
