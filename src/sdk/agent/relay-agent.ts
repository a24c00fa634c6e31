import { EventEmitter } from 'node:events';
import { io, type Socket } from 'socket.io-client';
import {
  BROADCAST_TO,
  Events,
  Namespaces,
  type ActivityState,
  type AgentFeedback,
  type AgentInboundMessage,
  type AgentToHubEvents,
  type HandshakeErrorData,
  type HubToAgentEvents,
  type MessageData,
  type ConversationControl,
} from '../../protocol';
import { RecentIds } from './recent-ids';
import { ackError, RelayAgentError, timeoutError } from './agent-error';
import { streamTuning, type RelayAgentOptions, type ReplyMessage, type StreamOptions, type StreamTuning } from './agent-options';
import { AgentStream } from './agent-stream';
import { ApprovalInbox, type ApprovalHandler } from './approval-inbox';
import { DeltaBudget } from './delta-budget';
import { StopRegistry } from './stop-registry';
import { socketSends, type StreamLink } from './stream-link';
import { pipeToStream, type StreamResult } from './stream-from';
import { pipeUIMessageStream, type UIMessageSource, type UIMessageStreamResult } from './ui-message-stream';

/** Second argument of the message handler. */
export interface MessageContext {
  /**
   * Aborted when the user stops the answer to this message (a stop by its id, or of a stream
   * started with `replyTo` = its id). Hand it to the LLM client to cancel the request.
   */
  signal: AbortSignal;
}

export type MessageHandler = (message: AgentInboundMessage, context: MessageContext) => void | Promise<void>;
export type FeedbackHandler = (feedback: AgentFeedback) => void | Promise<void>;
/** Told of every change of who answers one of the bot's users (docs/handoff.md). */
export type ControlHandler = (change: ConversationControl) => void | Promise<void>;
export { RelayAgentError };

type AgentEvents = {
  connect: [];
  disconnect: [reason: string];
  /** A refused or failed connection attempt (`RelayAgentError` with `code` when refused), or a failing handler. */
  error: [error: Error];
};

/**
 * Connects one agent runtime to the hub and keeps it connected.
 *
 * Incoming messages are acknowledged on receipt (the hub then acks the client) and handed to the
 * `onMessage` handler once per `id`, even when the hub redelivers a message whose first delivery
 * was not confirmed. A refused handshake with a terminal code (a wrong API key, a bad agentId), or
 * a session the hub closed for good (`session:closed` `API_KEY_REVOKED`), stops the runtime with an
 * `error` event (`RelayAgentError`, `retryable: false`); anything else is retried with backoff.
 *
 * Streamed replies (`stream`, `streamFrom`) grow on the user's screen as they are written, and the
 * user can stop them: the stream's `signal` and the handler's `signal` abort (docs/agent-sdk.md, streaming replies).
 *
 * @example
 * const agent = new RelayAgent({ url: 'http://localhost:3000', apiKey: process.env.AGENT_API_KEY!, agentId: 'support-bot' });
 * agent.onMessage(async (m) => {
 *   await agent.reply(m.from, `You said: ${m.text}`, undefined, m.id);
 * });
 * await agent.connect();
 *
 * @example
 * agent.onMessage(async (m, { signal }) => {
 *   await agent.activity(m.from, 'thinking');
 *   await agent.streamFrom(m.from, llm.tokens(m.text, { signal }), { replyTo: m.id });
 * });
 */
export class RelayAgent extends EventEmitter<AgentEvents> {
  private readonly socket: Socket<HubToAgentEvents, AgentToHubEvents>;
  /** Ids of messages already handed to the handler, to drop redeliveries (bounded by dedupeSize). */
  private readonly handled: RecentIds;
  private handler: MessageHandler = () => {};
  private feedbackHandler: FeedbackHandler = () => {};
  private readonly approvals: ApprovalInbox;
  private controlHandler?: ControlHandler;
  private readonly stops = new StopRegistry();
  private readonly tuning: StreamTuning;
  private readonly link: StreamLink;
  private attempt = 0;
  private retryTimer?: NodeJS.Timeout;
  private stopped = false;

  constructor(private readonly options: RelayAgentOptions) {
    super();
    this.handled = new RecentIds(options.dedupeSize ?? 10_000);
    this.approvals = new ApprovalInbox(this.handled, (err) => this.report(err));
    this.tuning = streamTuning(options);
    this.socket = io(`${options.url}${Namespaces.agent}`, {
      path: `${options.path ?? ''}/socket.io/`,
      transports: ['websocket'],
      forceNew: true,
      reconnection: false,
      autoConnect: false,
      auth: { apiKey: options.apiKey, agentId: options.agentId },
    });
    this.link = {
      budget: new DeltaBudget(options.deltaRate),
      ...socketSends(this.socket, this.ackTimeoutMs),
      decision: (id) => this.approvals.decision(id),
      end: (payload) => this.request(Events.streamEnd, payload),
      release: (stream) => this.stops.streams.get(stream.id) === stream && this.stops.streams.delete(stream.id),
    };
    this.socket.on('connect', () => {
      this.attempt = 0;
      this.emit('connect');
    });
    this.socket.on('connect_error', (err: Error & { data?: HandshakeErrorData }) => {
      const data = err.data;
      if (data && !data.retryable) {
        this.stop();
        this.report(new RelayAgentError(data.code, `handshake refused: ${data.code}`, false));
        return;
      }
      this.report(data ? new RelayAgentError(data.code, `handshake refused: ${data.code}`, true) : err);
      this.scheduleReconnect();
    });
    // The hub ends a session it will not take back (API_KEY_REVOKED: the key was deleted) with a
    // final code just before disconnecting; retrying with the same key would only be refused.
    this.socket.on(Events.sessionClosed, (info) => {
      if (info.retryable) return;
      this.stop();
      this.report(new RelayAgentError(info.code, `session closed by the hub: ${info.code}`, false));
    });
    this.socket.on('disconnect', (reason) => {
      this.stops.interruptAll();
      this.emit('disconnect', reason);
      if (reason !== 'io client disconnect') this.scheduleReconnect();
    });
    this.socket.on(Events.message, (message, ack) => {
      if (typeof ack === 'function') ack({ ok: true });
      if (this.handled.seen(message.id)) return;
      const { signal, done } = this.stops.handler(message.id);
      Promise.resolve()
        .then(() => this.handler(message, { signal }))
        .catch((err: unknown) => this.report(err instanceof Error ? err : new Error(String(err))))
        .finally(done);
    });
    this.socket.on(Events.stop, (request) => this.stops.stop(request));
    this.socket.on(Events.approval, (approval, ack) => this.approvals.receive(approval, ack));
    this.socket.on(Events.conversationControl, (change) => {
      Promise.resolve()
        .then(() => this.controlHandler?.(change))
        .catch((err: unknown) => this.report(err instanceof Error ? err : new Error(String(err))));
    });
    this.socket.on(Events.feedback, (feedback) => {
      Promise.resolve()
        .then(() => this.feedbackHandler(feedback))
        .catch((err: unknown) => this.report(err instanceof Error ? err : new Error(String(err))));
    });
  }

  get connected(): boolean {
    return this.socket.connected;
  }

  /** Sets the handler of client messages (one handler; a later call replaces it). */
  onMessage(handler: MessageHandler): this {
    this.handler = handler;
    return this;
  }

  /** Sets the handler of users' ratings of the bot's messages (H→A `feedback`, best effort). */
  onFeedback(handler: FeedbackHandler): this {
    this.feedbackHandler = handler;
    return this;
  }

  /**
   * Sets the handler of users' decisions on tool calls the bot asked to approve (H→A `approval`).
   * Each decision reaches it once per approval id; the hub redelivers it (here or, after a restart,
   * to another runtime) until the handler has settled, so do the approved work idempotently.
   *
   * @example
   * agent.onApproval(async ({ approved, toolCallId, from }) => {
   *   if (approved) await agent.reply(from, { parts: [{ type: 'text', text: await runTool(toolCallId) }] });
   * });
   */
  onApproval(handler: ApprovalHandler): this {
    this.approvals.handler = handler;
    return this;
  }

  /**
   * Sets the handler of changes of who answers a user (H→A `conversation:control`, docs/handoff.md):
   * `waiting` after {@link handoff}, `human` when an operator took over (the user's messages then
   * come with `observed: true`, and replies and streams to that user are refused
   * `CONVERSATION_HELD`), `bot` when the conversation is handed back.
   */
  onControl(handler: ControlHandler): this {
    this.controlHandler = handler;
    return this;
  }

  /**
   * Asks for a person for user `to`: the conversation turns `waiting` for the bot's operators, with
   * `reason` (≤ 500 chars) and `summary` (≤ 4000) shown in their console. Rejects with a
   * {@link RelayAgentError} `CONVERSATION_HELD` when an operator holds it already.
   * @example
   * agent.onMessage(async (m) => {
   *   if (/human|person/i.test(m.text)) await agent.handoff(m.from, { reason: 'asked for a person' });
   * });
   */
  async handoff(to: string, options: { reason?: string; summary?: string } = {}): Promise<void> {
    const { reason, summary } = options;
    const ack = await this.request(Events.handoff, {
      to,
      ...(reason !== undefined ? { reason } : {}),
      ...(summary !== undefined ? { summary } : {}),
    });
    if (!ack.ok) throw ackError(ack.error);
  }

  /** Connects and resolves on the first successful handshake; rejects on a terminal refusal. */
  connect(): Promise<void> {
    this.stopped = false;
    return new Promise((resolve, reject) => {
      const onConnect = () => {
        this.off('error', onError);
        resolve();
      };
      const onError = (err: Error) => {
        if (err instanceof RelayAgentError && !err.retryable) {
          this.off('connect', onConnect);
          this.off('error', onError);
          reject(err);
        }
      };
      this.once('connect', onConnect);
      this.on('error', onError);
      this.socket.connect();
    });
  }

  /**
   * Sends text to one client (every tab of it) or to all clients of the bot with `'*'`. Resolves once
   * the hub has written it to the conversation log (docs/protocol.md), so a client that is offline now gets it
   * when it reconnects; rejects with a {@link RelayAgentError} (`retryable` for `SERVER_UNAVAILABLE`).
   */
  async reply(to: string, text: string, data?: MessageData, replyTo?: string): Promise<{ id: string; ts: string }>;
  /**
   * The same with parts: `reply(to, { parts, replyTo })`. `text` defaults to the text parts joined,
   * so clients that show only text still show the answer.
   *
   * @example
   * await agent.reply(m.from, { parts: [{ type: 'text', text: 'See ' }, { type: 'source', sourceId: '1', url: 'https://example.com' }] });
   */
  async reply(to: string, message: ReplyMessage): Promise<{ id: string; ts: string }>;
  async reply(to: string, content: string | ReplyMessage, data?: MessageData, replyTo?: string): Promise<{ id: string; ts: string }> {
    const message =
      typeof content === 'string' || typeof content !== 'object' || content === null ? { text: content, data, replyTo } : content;
    const { parts } = message;
    const text = message.text ?? (parts ?? []).map((p) => (p.type === 'text' ? p.text : '')).join('');
    const ack = await this.request(Events.reply, {
      to,
      text,
      ...(parts ? { parts } : {}),
      ...(message.data ? { data: message.data } : {}),
      ...(message.replyTo ? { replyTo: message.replyTo } : {}),
    });
    if (!ack.ok) throw ackError(ack.error);
    return { id: ack.id, ts: ack.ts };
  }

  /** Sends a trace to the bot's admin clients; `clientId` labels the conversation. */
  async debug(trace: unknown, clientId?: string): Promise<void> {
    const ack = await this.request(Events.debug, { trace, ...(clientId ? { clientId } : {}) });
    if (!ack.ok) throw ackError(ack.error);
  }

  /**
   * Opens a streamed reply to one client (every tab of it; not `'*'`). Resolves once the hub has
   * recorded the open stream; its `id` is the message's id from then on. Write with `s.write(text)`,
   * finish with `s.end()`; `s.signal` aborts when the user stops it. Rejects with a
   * {@link RelayAgentError}: `STREAM_LIMIT` (too many open on this runtime), `QUOTA_EXCEEDED` (the
   * bot's storage quota, docs/operations.md), `SERVER_UNAVAILABLE`, …
   */
  async stream(to: string, options: StreamOptions = {}): Promise<AgentStream> {
    if (to === BROADCAST_TO) throw new RelayAgentError('INVALID_PAYLOAD', "a stream goes to one client, not '*'");
    const { replyTo, data } = options;
    const ack = await this.request(Events.streamStart, { to, ...(replyTo ? { replyTo } : {}), ...(data ? { data } : {}) });
    if (!ack.ok) throw ackError(ack.error);
    const stream = new AgentStream(ack.id, ack.ts, to, replyTo, this.link, this.tuning);
    if (!this.socket.connected) stream.interrupt();
    else this.stops.add(stream);
    return stream;
  }

  /**
   * Streams what `source` yields (an LLM client's text chunks) to one client and ends the stream:
   * `complete` when the source is done, `cancelled` when the user stopped it (iteration stops and
   * the source's `return()` is called), `error` when the source throws (the error is rethrown).
   */
  async streamFrom(to: string, source: AsyncIterable<string>, options: StreamOptions = {}): Promise<StreamResult> {
    return pipeToStream(await this.stream(to, options), source);
  }

  /**
   * Streams an AI SDK UI message stream (`streamText(…).toUIMessageStream()`) to one client as the
   * answer's parts (text, reasoning, tool calls, sources, files, data: the table is in
   * docs/agent-sdk.md#ai-sdk-ui-message-streams) and ends it: `complete` after `finish`, `cancelled`
   * after `abort` or when the user stopped it (the UI stream is cancelled; pass the handler's
   * `signal` to `streamText` too), `error` after an `error` chunk (its text in the result) or when
   * the stream throws (rethrown).
   *
   * @example
   * agent.onMessage(async (m, { signal }) => {
   *   const result = streamText({ model, prompt: m.text, tools, abortSignal: signal });
   *   await agent.streamUIMessage(m.from, result.toUIMessageStream(), { replyTo: m.id });
   * });
   */
  async streamUIMessage(to: string, source: UIMessageSource, options: StreamOptions = {}): Promise<UIMessageStreamResult> {
    return pipeUIMessageStream(await this.stream(to, options), source);
  }

  /**
   * Tells one client what the bot is doing (`thinking`, `typing`, `tool` with a label, `idle`).
   * Ephemeral: the hub clears it itself when a message or stream reaches the client, or after
   * its ACTIVITY_TTL_MS.
   */
  async activity(to: string, state: ActivityState, label?: string): Promise<void> {
    const ack = await this.request(Events.activity, { to, state, ...(label !== undefined ? { label } : {}) });
    if (!ack.ok) throw ackError(ack.error);
  }

  /** Disconnects and stops reconnecting. */
  close(): void {
    this.stop();
    this.approvals.clear();
    this.socket.disconnect();
  }

  private get ackTimeoutMs(): number {
    return this.options.ackTimeoutMs ?? 10_000;
  }

  /** Emits an acknowledged event; a timeout or a lost connection becomes a {@link RelayAgentError}. */
  private async request<E extends keyof AgentToHubEvents>(
    event: E,
    payload: Parameters<AgentToHubEvents[E]>[0],
  ): Promise<Parameters<Parameters<AgentToHubEvents[E]>[1]>[0]> {
    try {
      return (await (this.socket.timeout(this.ackTimeoutMs).emitWithAck as (e: string, p: unknown) => Promise<unknown>)(
        event,
        payload,
      )) as Parameters<Parameters<AgentToHubEvents[E]>[1]>[0];
    } catch {
      throw timeoutError(event);
    }
  }

  /** Emits `error` when someone listens; otherwise a process warning, never an uncaught throw. */
  private report(err: Error): void {
    if (this.listenerCount('error') > 0) this.emit('error', err);
    else process.emitWarning(err.message, { code: err instanceof RelayAgentError ? err.code : 'RELAY_AGENT' });
  }

  private stop(): void {
    this.stopped = true;
    clearTimeout(this.retryTimer);
  }

  private scheduleReconnect(): void {
    if (this.stopped || this.retryTimer) return;
    const base = this.options.backoff?.baseMs ?? 500;
    const cap = this.options.backoff?.capMs ?? 30_000;
    const delay = Math.random() * Math.min(cap, base * 2 ** this.attempt++);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      if (!this.stopped) this.socket.connect();
    }, delay);
  }
}
