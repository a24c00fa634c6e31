import type { AgentStreamStatus } from '../../protocol';
import { RelayAgentError } from './agent-error';
import type { AgentStream } from './agent-stream';

/** What {@link RelayAgent.streamFrom} resolves with: the message and how it ended. */
export interface StreamResult {
  id: string;
  ts: string;
  status: AgentStreamStatus;
}

/**
 * Writes every string `source` yields to `stream` and ends it: `complete` when the source is done,
 * `cancelled` when the stream's signal aborts first (the user stopped it: the source's `return()`
 * is called so an LLM client can close its request), `error` when the source throws (its error is
 * rethrown after the end) or a write is refused (that error is rethrown).
 */
export async function pipeToStream(stream: AgentStream, source: AsyncIterable<string>): Promise<StreamResult> {
  const iterator = source[Symbol.asyncIterator]();
  // A pending next() can take as long as the model does; a stop must not wait for it.
  let onAbort: () => void = () => {};
  const aborted = new Promise<'aborted'>((resolve) => (onAbort = () => resolve('aborted')));
  if (stream.signal.aborted) onAbort();
  else stream.signal.addEventListener('abort', onAbort, { once: true });
  let failure: unknown;
  let failed = false;
  try {
    for (;;) {
      const next = await Promise.race([iterator.next(), aborted]);
      if (next === 'aborted' || next.done) break;
      if (typeof next.value !== 'string')
        throw new RelayAgentError('INVALID_PAYLOAD', `streamFrom: the source yielded a ${typeof next.value}, not a string`);
      await stream.write(next.value);
    }
  } catch (err) {
    failed = true;
    failure = err;
  } finally {
    stream.signal.removeEventListener('abort', onAbort);
  }
  if (stream.signal.aborted || failed) closeQuietly(iterator);
  const status: AgentStreamStatus = failed ? 'error' : stream.signal.aborted ? 'cancelled' : 'complete';
  let ended: { id: string; ts: string };
  try {
    ended = await stream.end(status === 'complete' ? {} : { status });
  } catch (endError) {
    throw failed ? failure : endError;
  }
  if (failed) throw failure;
  return { ...ended, status };
}

/** Asks the source to clean up (close its HTTP request) without waiting on it: it may be mid-`next()`. */
function closeQuietly(iterator: AsyncIterator<string>): void {
  try {
    void Promise.resolve(iterator.return?.()).catch(() => {});
  } catch {
    // a source whose return() throws has nothing left for us to close
  }
}
