import type { AgentStop } from '../../protocol';
import type { AgentStream } from './agent-stream';
import { RecentIds } from './recent-ids';

/**
 * Where a user's stop (H→A `stop`) lands in one runtime: the open streams by id, and the handlers
 * of client messages by message id. A stop names a stream (`id`) or the user's message the bot is
 * answering (`messageId`, sent before a stream may exist); either way it aborts the stream, the
 * handler of the message it answers, and every stream started in reply to that message, including
 * one started after the stop (the message ids stopped lately are remembered for that).
 */
export class StopRegistry {
  /** Open streams of this runtime, by id. */
  readonly streams = new Map<string, AgentStream>();
  private readonly handlers = new Map<string, AbortController>();
  private readonly stopped: RecentIds;

  constructor(remember = 1000) {
    this.stopped = new RecentIds(remember);
  }

  /** The signal of the handler of message `id`, and the call that forgets it once the handler settles. */
  handler(id: string): { signal: AbortSignal; done: () => void } {
    const controller = new AbortController();
    if (this.stopped.has(id)) controller.abort(stopReason());
    this.handlers.set(id, controller);
    return { signal: controller.signal, done: () => this.handlers.get(id) === controller && this.handlers.delete(id) };
  }

  /** Registers an open stream; it starts stopped when its message was stopped before it existed. */
  add(stream: AgentStream): void {
    this.streams.set(stream.id, stream);
    if (stream.replyTo !== undefined && this.stopped.has(stream.replyTo)) stream.stop();
  }

  /** Applies an H→A `stop`. Unknown ids are ignored: the stream may have ended meanwhile. */
  stop(request: AgentStop): void {
    const stream = typeof request?.id === 'string' ? this.streams.get(request.id) : undefined;
    stream?.stop();
    const messageId = typeof request?.messageId === 'string' ? request.messageId : stream?.replyTo;
    if (messageId === undefined) return;
    this.stopped.add(messageId);
    this.handlers.get(messageId)?.abort(stopReason());
    for (const other of this.streams.values()) if (other.replyTo === messageId) other.stop();
  }

  /** The connection dropped: every open stream was ended `interrupted` by the hub. */
  interruptAll(): void {
    for (const stream of [...this.streams.values()]) stream.interrupt();
    this.streams.clear();
  }
}

function stopReason(): DOMException {
  return new DOMException('the user stopped the answer', 'AbortError');
}
