import type { AgentStreamStatus, MessageData, SendAck, StreamDelta, StreamDeltaAck, StreamEnd } from '../../protocol';
import { ackError, AgentSdkCodes, RelayAgentError } from './agent-error';
import type { DeltaBudget } from './delta-budget';

/** How a stream batches and paces its writes (options of {@link RelayAgent}). */
export interface StreamTuning {
  /** Writes made within this many milliseconds go out as one `stream:delta` (0 sends each at once). */
  coalesceMs: number;
  /** Largest delta, in UTF-8 bytes; a longer write is cut (never inside a character). */
  maxDeltaBytes: number;
  /** Text written but not yet acknowledged by the hub beyond which `write` waits. */
  highWaterBytes: number;
  /** An ack is asked for at least every this many deltas (and every quarter of `highWaterBytes`). */
  ackEvery: number;
}

/** What a stream needs of its runtime: the socket's two events and the shared delta budget. */
export interface StreamLink {
  readonly budget: DeltaBudget;
  /** Sends a delta; `onAck` asks the hub for an ack and gets it, an error, or undefined on timeout. */
  delta(payload: StreamDelta, onAck?: (ack: StreamDeltaAck | undefined) => void): boolean;
  end(payload: StreamEnd): Promise<SendAck>;
  /** The stream is over; the runtime forgets it. */
  release(stream: AgentStream): void;
}

/** `end` options: `text` replaces everything written; `status` defaults to `complete` (`cancelled` once stopped). */
export interface StreamEndOptions {
  text?: string;
  data?: MessageData;
  status?: AgentStreamStatus;
}

const encoder = new TextEncoder();
const RESOLVED = Promise.resolve();

/**
 * One streamed reply, opened by {@link RelayAgent.stream}. `write` appends text: writes made within
 * `coalesceMs` leave as one delta, and the returned promise holds a writer that outpaces the hub
 * (more than `highWaterBytes` written and not yet acknowledged) until the hub catches up, so a fast
 * producer never grows memory. `signal` is aborted when the user stops the answer (or the
 * connection drops): writes after that are dropped, and `end()` defaults to status `cancelled`.
 */
export class AgentStream {
  private readonly controller = new AbortController();
  private pending = '';
  private pendingBytes = 0;
  private sentBytes = 0;
  private ackedBytes = 0;
  private deltasSinceAsk = Infinity;
  private bytesSinceAsk = 0;
  private timer: NodeJS.Timeout | undefined;
  private waiters: Array<{ resolve: () => void; reject: (err: Error) => void }> = [];
  private failure: RelayAgentError | undefined;
  private ending: Promise<{ id: string; ts: string }> | undefined;

  constructor(
    /** The message's id, from the hub's `stream:start` ack. */
    readonly id: string,
    readonly ts: string,
    readonly to: string,
    readonly replyTo: string | undefined,
    private readonly link: StreamLink,
    private readonly tuning: StreamTuning,
  ) {}

  /** Aborted when the user stops this answer (or the message it replies to), or the connection drops. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Bytes written that the hub has not acknowledged yet (coalescing, or on the wire). */
  get bufferedBytes(): number {
    return this.pendingBytes + this.sentBytes - this.ackedBytes;
  }

  /**
   * Appends `text`. Resolves at once unless the hub lags by more than `highWaterBytes`; rejects with
   * the hub's code once a delta was refused (`PAYLOAD_TOO_LARGE` past `STREAM_MAX_BYTES`,
   * `STREAM_NOT_FOUND` after the hub ended the stream), `STREAM_ENDED` after `end`, or
   * `STREAM_INTERRUPTED` when the connection dropped.
   */
  write(text: string): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.ending) return Promise.reject(new RelayAgentError(AgentSdkCodes.STREAM_ENDED, `stream ${this.id} has ended`));
    if (typeof text !== 'string') return Promise.reject(new RelayAgentError('INVALID_PAYLOAD', 'write takes a string'));
    if (this.signal.aborted || text === '') return RESOLVED;
    this.pending += text;
    this.pendingBytes += Buffer.byteLength(text);
    if (this.tuning.coalesceMs === 0 || this.pendingBytes >= this.tuning.maxDeltaBytes) this.pump();
    else this.timer ??= setTimeout(() => this.pump(), this.tuning.coalesceMs);
    if (this.bufferedBytes <= this.tuning.highWaterBytes) return RESOLVED;
    return new Promise((resolve, reject) => this.waiters.push({ resolve, reject }));
  }

  /**
   * Ends the stream: what is still coalescing goes out first (unless `text` replaces it all), then
   * `stream:end`. Resolves once the final message is in the conversation log; a second call gets the
   * same promise. Status `cancelled` is the default after a stop.
   */
  end(options: StreamEndOptions = {}): Promise<{ id: string; ts: string }> {
    this.ending ??= this.finish(options).finally(() => this.close(undefined));
    return this.ending;
  }

  /** The connection dropped: the hub has ended the stream `interrupted`. */
  interrupt(): void {
    const error = new RelayAgentError(
      AgentSdkCodes.STREAM_INTERRUPTED,
      `stream ${this.id} was interrupted: the connection to the hub dropped`,
    );
    this.failure ??= error;
    this.close(error);
    this.controller.abort(error);
  }

  /** The user stopped the answer (H→A `stop`). */
  stop(): void {
    this.controller.abort(new DOMException('the user stopped the answer', 'AbortError'));
    this.settleWaiters();
  }

  private async finish(options: StreamEndOptions): Promise<{ id: string; ts: string }> {
    if (this.failure?.code === AgentSdkCodes.STREAM_INTERRUPTED) throw this.failure;
    clearTimeout(this.timer);
    this.timer = undefined;
    if (options.text === undefined) {
      while (this.pendingBytes > 0 && !this.failure) {
        const wait = this.link.budget.take();
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
        else this.send();
      }
    }
    const payload: StreamEnd = { id: this.id };
    if (options.text !== undefined) payload.text = options.text;
    if (options.data !== undefined) payload.data = options.data;
    const status = options.status ?? (this.signal.aborted ? 'cancelled' : undefined);
    if (status !== undefined) payload.status = status;
    const ack = await this.link.end(payload);
    if (!ack.ok) throw ackError(ack.error);
    return { id: ack.id, ts: ack.ts };
  }

  /** Sends what is coalescing while the budget allows, and comes back when it has a token again. */
  private pump(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    while (this.pendingBytes > 0 && !this.failure && !this.ending) {
      const wait = this.link.budget.take();
      if (wait > 0) {
        this.timer = setTimeout(() => this.pump(), wait);
        return;
      }
      this.send();
    }
  }

  /** One delta of at most `maxDeltaBytes` from the front of what is coalescing. */
  private send(): void {
    let text = this.pending;
    let bytes = this.pendingBytes;
    if (bytes > this.tuning.maxDeltaBytes) {
      // encodeInto stops before a character that does not fit, so a cut never splits one.
      const { read, written } = encoder.encodeInto(text, new Uint8Array(this.tuning.maxDeltaBytes));
      text = text.slice(0, read);
      bytes = written;
    }
    this.pending = this.pending.slice(text.length);
    this.pendingBytes -= bytes;
    this.sentBytes += bytes;
    this.bytesSinceAsk += bytes;
    const ask = ++this.deltasSinceAsk > this.tuning.ackEvery || this.bytesSinceAsk >= this.tuning.highWaterBytes / 4;
    if (!ask) {
      if (!this.link.delta({ id: this.id, text })) this.interrupt();
      return;
    }
    this.deltasSinceAsk = 1;
    this.bytesSinceAsk = 0;
    const upTo = this.sentBytes;
    const sent = this.link.delta({ id: this.id, text }, (ack) => {
      if (ack?.ok) {
        this.ackedBytes = Math.max(this.ackedBytes, upTo);
        this.settleWaiters();
      } else if (!this.failure) {
        this.failure = ack
          ? ackError(ack.error)
          : new RelayAgentError(AgentSdkCodes.TIMEOUT, 'a stream:delta was not acknowledged in time', true);
        this.pending = '';
        this.pendingBytes = 0;
        this.settleWaiters();
      }
    });
    if (!sent) this.interrupt();
  }

  /** Wakes writers that may go on: the hub caught up, the stream failed, or it was stopped. */
  private settleWaiters(): void {
    if (this.waiters.length === 0) return;
    if (!this.failure && !this.signal.aborted && this.bufferedBytes > this.tuning.highWaterBytes) return;
    for (const waiter of this.waiters.splice(0)) {
      if (this.failure) waiter.reject(this.failure);
      else waiter.resolve();
    }
  }

  private close(error: RelayAgentError | undefined): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.pending = '';
    this.pendingBytes = 0;
    this.ackedBytes = this.sentBytes;
    for (const waiter of this.waiters.splice(0)) {
      if (error) waiter.reject(error);
      else waiter.resolve();
    }
    this.link.release(this);
  }
}
