import { randomUUID } from 'node:crypto';
import type {
  AgentApproval,
  AgentStreamStatus,
  DataPart,
  FilePart,
  MessageData,
  MessagePart,
  PartPatch,
  SourcePart,
  StreamDelta,
  StreamDeltaAck,
  StreamEnd,
  StreamPart,
  StreamPartAck,
  StreamUpdate,
  Suggestion,
} from '../../protocol';
import { ackError, AgentSdkCodes, RelayAgentError } from './agent-error';
import type { StreamTuning } from './agent-options';
import { PartWriter, ToolCall, type NewToolCall, type PartStream } from './part-handles';
import type { StreamLink } from './stream-link';

/** `end` options: `text` (and `parts`) replace everything written; `status` defaults to `complete` (`cancelled` once stopped). */
export interface StreamEndOptions {
  text?: string;
  parts?: MessagePart[];
  data?: MessageData;
  status?: AgentStreamStatus;
}

const encoder = new TextEncoder();
const RESOLVED = Promise.resolve();

/** What waits to go out, in order: text for a part (coalesced), or a part opened or changed. */
type Op =
  | { event: 'delta'; index: number | undefined; text: string; bytes: number }
  | {
      event: 'part' | 'update';
      body: StreamPart | StreamUpdate;
      resolve: (ack: StreamPartAck | StreamDeltaAck) => void;
      reject: (err: Error) => void;
    };

/**
 * One streamed reply, opened by {@link RelayAgent.stream}. `write` appends text: writes made within
 * `coalesceMs` leave as one delta, and the returned promise holds a writer that outpaces the hub
 * (more than `highWaterBytes` written and not yet acknowledged) until the hub catches up, so a fast
 * producer never grows memory. `signal` is aborted when the user stops the answer (or the
 * connection drops): writes after that are dropped, and `end()` defaults to status `cancelled`.
 *
 * Beside text, an answer holds parts (docs/agent-sdk.md, parts): `reasoning()`, `tool()`,
 * `source()`, `file()`, `data()`, `suggest()`. Everything leaves in the order it was called, so the
 * index of each part is known here without waiting for the hub.
 */
export class AgentStream implements PartStream {
  private readonly controller = new AbortController();
  private readonly ops: Op[] = [];
  /** The type of each part, as queued: where text written without an index lands. */
  private readonly types: MessagePart['type'][] = [];
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
    return this.append(undefined, text);
  }

  /**
   * Opens a reasoning part (shown collapsed, as the model's thinking); write to it with the
   * handle's `write`. Text written with `write` after it goes to a new text part below it.
   */
  reasoning(text = ''): PartWriter {
    const index = this.open({ type: 'reasoning', text });
    return new PartWriter(this, index);
  }

  /**
   * Opens a tool call in state `input-streaming`: the handle streams its input, marks it available,
   * asks the user for approval, and sets its output or error (see {@link ToolCall}).
   */
  tool(call: NewToolCall): ToolCall {
    const toolCallId = call.toolCallId ?? randomUUID();
    const part: MessagePart = { type: 'tool', toolCallId, toolName: call.toolName, state: 'input-streaming' };
    if (call.title !== undefined) part.title = call.title;
    return new ToolCall(this, this.open(part), toolCallId);
  }

  /** Adds a cited source (`sourceId` defaults to a fresh id). Resolves with its index once the hub holds it. */
  source(source: Omit<SourcePart, 'type' | 'sourceId'> & { sourceId?: string }): Promise<number> {
    return this.part({ type: 'source', sourceId: source.sourceId ?? randomUUID(), ...source });
  }

  /** Adds a file (`url` http: or https:, `mediaType`); images show as a preview. */
  file(file: Omit<FilePart, 'type'>): Promise<number> {
    return this.part({ type: 'file', ...file });
  }

  /** Adds structured data for the integrator's renderer of `name`. */
  data(name: string, data: DataPart['data'], id?: string): Promise<number> {
    return this.part(id === undefined ? { type: 'data', name, data } : { type: 'data', name, id, data });
  }

  /** Adds quick replies (at most 10): a string is shown and sent as is; `value` is sent instead of `text`. */
  suggest(items: Array<string | Suggestion>): Promise<number> {
    return this.part({ type: 'suggestions', items: items.map((item) => (typeof item === 'string' ? { text: item } : item)) });
  }

  /**
   * Adds any part (the methods above are shorthands). Resolves with its index once the hub holds it;
   * rejects with the hub's code (`INVALID_PAYLOAD`, `PAYLOAD_TOO_LARGE`) when refused, and then the
   * stream fails as a refused delta fails it: its indices would no longer match the hub's.
   */
  part(part: MessagePart): Promise<number> {
    let index = -1;
    const acked = this.guard() ?? this.change('part', { id: this.id, part }, () => (index = this.types.push(part.type) - 1));
    return acked.then((ack) => {
      // The handles address parts by the index counted here; a hub that counts otherwise would
      // have every later change land on the wrong part.
      if (ack.ok && ack.index !== index)
        throw this.fail(new RelayAgentError('INVALID_PAYLOAD', `part ${index} was put at ${ack.index}`), 'part');
      return index;
    });
  }

  /** @internal Appends `text` to part `index` (a handle's write). */
  append(index: number | undefined, text: string): Promise<void> {
    const refused = this.guard();
    if (refused) return refused;
    if (typeof text !== 'string') return Promise.reject(new RelayAgentError('INVALID_PAYLOAD', 'write takes a string'));
    if (this.signal.aborted || text === '') return RESOLVED;
    if (index === undefined && this.types[this.types.length - 1] !== 'text') this.types.push('text');
    const bytes = Buffer.byteLength(text);
    const tail = this.ops[this.ops.length - 1];
    if (tail?.event === 'delta' && tail.index === index) {
      tail.text += text;
      tail.bytes += bytes;
    } else this.ops.push({ event: 'delta', index, text, bytes });
    this.pendingBytes += bytes;
    if (this.tuning.coalesceMs === 0 || this.pendingBytes >= this.tuning.maxDeltaBytes) this.pump();
    else this.timer ??= setTimeout(() => this.pump(), this.tuning.coalesceMs);
    if (this.bufferedBytes <= this.tuning.highWaterBytes) return RESOLVED;
    return new Promise((resolve, reject) => this.waiters.push({ resolve, reject }));
  }

  /** @internal Merges `fields` into part `index` (a tool call's state, input, output). */
  update(index: number, fields: PartPatch): Promise<void> {
    return (this.guard() ?? this.change('update', { id: this.id, index, part: fields })).then(() => {});
  }

  /** @internal The decision on an approval this runtime asked for. */
  decision(approvalId: string): Promise<AgentApproval> {
    return this.link.decision(approvalId);
  }

  /** Opens a part now and returns its index; a refusal fails the stream (see {@link part}). */
  private open(part: MessagePart): number {
    void this.part(part).catch(() => {});
    return this.types.length - 1;
  }

  private guard(): Promise<never> | undefined {
    if (this.failure) return Promise.reject(this.failure);
    if (this.ending) return Promise.reject(new RelayAgentError(AgentSdkCodes.STREAM_ENDED, `stream ${this.id} has ended`));
    return undefined;
  }

  /** Queues a part or an update behind what is written, and sends at once what is queued. */
  private change(event: 'part', body: StreamPart, queued: () => void): Promise<StreamPartAck>;
  private change(event: 'update', body: StreamUpdate): Promise<StreamDeltaAck>;
  private change(event: 'part' | 'update', body: StreamPart | StreamUpdate, queued?: () => void): Promise<StreamPartAck | StreamDeltaAck> {
    queued?.();
    // After a stop nothing more reaches the hub; the handle's calls settle quietly.
    if (this.signal.aborted) return Promise.resolve({ ok: true, seq: 0, index: this.types.length - 1 });
    const promise = new Promise<StreamPartAck | StreamDeltaAck>((resolve, reject) => this.ops.push({ event, body, resolve, reject }));
    this.pump();
    return promise;
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
    if (options.text !== undefined) this.dropText();
    while (this.ops.length > 0 && !this.failure) {
      const wait = this.link.budget.take();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      else this.send();
    }
    const payload: StreamEnd = { id: this.id };
    if (options.text !== undefined) payload.text = options.text;
    if (options.data !== undefined) payload.data = options.data;
    if (options.parts !== undefined) payload.parts = options.parts;
    const status = options.status ?? (this.signal.aborted ? 'cancelled' : undefined);
    if (status !== undefined) payload.status = status;
    const ack = await this.link.end(payload);
    if (!ack.ok) throw ackError(ack.error);
    return { id: ack.id, ts: ack.ts };
  }

  /** Sends what is queued while the budget allows, and comes back when it has a token again. */
  private pump(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    while (this.ops.length > 0 && !this.failure && !this.ending) {
      const wait = this.link.budget.take();
      if (wait > 0) {
        this.timer = setTimeout(() => this.pump(), wait);
        return;
      }
      this.send();
    }
  }

  /** The op at the front: a part or an update, or one delta of at most `maxDeltaBytes` of text. */
  private send(): void {
    const op = this.ops[0];
    if (op.event !== 'delta') {
      this.ops.shift();
      // Handled in order, so its ack also covers every delta sent before it.
      const upTo = this.sentBytes;
      const sent = this.link.change({ event: op.event, body: op.body } as Parameters<StreamLink['change']>[0], (ack) => {
        if (ack?.ok) {
          this.ackedBytes = Math.max(this.ackedBytes, upTo);
          op.resolve(ack);
          this.settleWaiters();
        } else op.reject(this.fail(ack ? ackError(ack.error) : undefined, op.event));
      });
      if (!sent) {
        this.interrupt();
        op.reject(this.failure ?? new RelayAgentError(AgentSdkCodes.STREAM_INTERRUPTED));
      }
      return;
    }
    let text = op.text;
    let bytes = op.bytes;
    if (bytes > this.tuning.maxDeltaBytes) {
      // encodeInto stops before a character that does not fit, so a cut never splits one.
      const { read, written } = encoder.encodeInto(text, new Uint8Array(this.tuning.maxDeltaBytes));
      text = text.slice(0, read);
      bytes = written;
    }
    op.text = op.text.slice(text.length);
    op.bytes -= bytes;
    if (op.bytes === 0) this.ops.shift();
    this.pendingBytes -= bytes;
    this.sentBytes += bytes;
    this.bytesSinceAsk += bytes;
    const payload: StreamDelta = op.index === undefined ? { id: this.id, text } : { id: this.id, text, index: op.index };
    // Nothing waits for an ack: the hub takes a stream's changes in the order sent, each checked
    // against the ones before it (docs/parts.md, "Streams").
    const ask = ++this.deltasSinceAsk > this.tuning.ackEvery || this.bytesSinceAsk >= this.tuning.highWaterBytes / 4;
    if (!ask) {
      if (!this.link.delta(payload)) this.interrupt();
      return;
    }
    this.deltasSinceAsk = 1;
    this.bytesSinceAsk = 0;
    const upTo = this.sentBytes;
    const sent = this.link.delta(payload, (ack) => {
      if (ack?.ok) {
        this.ackedBytes = Math.max(this.ackedBytes, upTo);
        this.settleWaiters();
      } else this.fail(ack ? ackError(ack.error) : undefined, 'delta');
    });
    if (!sent) this.interrupt();
  }

  /** A refused (or unanswered) delta or part: the stream fails, and what is queued is dropped. */
  private fail(error: RelayAgentError | undefined, what: string): RelayAgentError {
    if (!this.failure) {
      this.failure = error ?? new RelayAgentError(AgentSdkCodes.TIMEOUT, `a stream:${what} was not acknowledged in time`, true);
      this.dropQueued(this.failure);
      this.settleWaiters();
    }
    return this.failure;
  }

  /** Drops the text still queued (`end` with a replacing `text`). */
  private dropText(): void {
    for (let i = this.ops.length - 1; i >= 0; i--) if (this.ops[i].event === 'delta') this.ops.splice(i, 1);
    this.pendingBytes = 0;
  }

  private dropQueued(error: RelayAgentError | undefined): void {
    for (const op of this.ops.splice(0)) {
      if (op.event === 'delta') continue;
      if (error) op.reject(error);
      else op.reject(new RelayAgentError(AgentSdkCodes.STREAM_ENDED, `stream ${this.id} has ended`));
    }
    this.pendingBytes = 0;
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
    this.dropQueued(error);
    this.ackedBytes = this.sentBytes;
    for (const waiter of this.waiters.splice(0)) {
      if (error) waiter.reject(error);
      else waiter.resolve();
    }
    this.link.release(this);
  }
}
