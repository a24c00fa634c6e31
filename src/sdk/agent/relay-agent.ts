import { EventEmitter } from 'node:events';
import { io, type Socket } from 'socket.io-client';
import {
  AckCodes,
  Events,
  Namespaces,
  type AckError,
  type AgentInboundMessage,
  type AgentToHubEvents,
  type DebugAck,
  type HandshakeErrorData,
  type HubToAgentEvents,
  type MessageData,
  type SendAck,
} from '../../protocol';
import { HandledIds } from './handled-ids';

export interface RelayAgentOptions {
  /** Origin of the hub, e.g. `https://relay.example.com`. */
  url: string;
  /** One of the hub's AGENT_API_KEYS, or a managed API key with the `agent:connect` scope for this bot. */
  apiKey: string;
  /** The bot this runtime serves. */
  agentId: string;
  /** Path prefix when the hub is mounted below the origin root (default none). */
  path?: string;
  /** Reconnect backoff: delays are uniform in [0, min(capMs, baseMs · 2^attempt)]. */
  backoff?: { baseMs?: number; capMs?: number };
  /** How many handled message ids are remembered to drop redeliveries (default 10,000). */
  dedupeSize?: number;
  /** Ack timeout of `reply` and `debug` (default 10 s). */
  ackTimeoutMs?: number;
}

/**
 * A refused handshake or an error ack, with the hub's code. `retryable` on an ack error says whether
 * sending again may succeed: `SERVER_UNAVAILABLE` (the conversation log could not be written, so the
 * reply was not delivered) and `RATE_LIMITED` are; `INVALID_PAYLOAD` and `PAYLOAD_TOO_LARGE` are not.
 */
export class RelayAgentError extends Error {
  constructor(
    readonly code: string,
    message: string = code,
    readonly retryable = false,
  ) {
    super(message);
    this.name = 'RelayAgentError';
  }
}

export type MessageHandler = (message: AgentInboundMessage) => void | Promise<void>;

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
 * @example
 * const agent = new RelayAgent({ url: 'http://localhost:3000', apiKey: process.env.AGENT_API_KEY!, agentId: 'support-bot' });
 * agent.onMessage(async (m) => {
 *   await agent.reply(m.from, `You said: ${m.text}`, undefined, m.id);
 * });
 * await agent.connect();
 */
export class RelayAgent extends EventEmitter<AgentEvents> {
  private readonly socket: Socket<HubToAgentEvents, AgentToHubEvents>;
  /** Ids of messages already handed to the handler, to drop redeliveries (bounded by dedupeSize). */
  private readonly handled: HandledIds;
  private handler: MessageHandler = () => {};
  private attempt = 0;
  private retryTimer?: NodeJS.Timeout;
  private stopped = false;

  constructor(private readonly options: RelayAgentOptions) {
    super();
    this.handled = new HandledIds(options.dedupeSize ?? 10_000);
    this.socket = io(`${options.url}${Namespaces.agent}`, {
      path: `${options.path ?? ''}/socket.io/`,
      transports: ['websocket'],
      forceNew: true,
      reconnection: false,
      autoConnect: false,
      auth: { apiKey: options.apiKey, agentId: options.agentId },
    });
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
      this.emit('disconnect', reason);
      if (reason !== 'io client disconnect') this.scheduleReconnect();
    });
    this.socket.on(Events.message, (message, ack) => {
      if (typeof ack === 'function') ack({ ok: true });
      if (this.handled.seen(message.id)) return;
      Promise.resolve()
        .then(() => this.handler(message))
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
  async reply(to: string, text: string, data?: MessageData, replyTo?: string): Promise<{ id: string; ts: string }> {
    const ack = (await this.socket
      .timeout(this.options.ackTimeoutMs ?? 10_000)
      .emitWithAck(Events.reply, { to, text, ...(data ? { data } : {}), ...(replyTo ? { replyTo } : {}) })) as SendAck;
    if (!ack.ok) throw ackError(ack.error);
    return { id: ack.id, ts: ack.ts };
  }

  /** Sends a trace to the bot's admin clients; `clientId` labels the conversation. */
  async debug(trace: unknown, clientId?: string): Promise<void> {
    const ack = (await this.socket
      .timeout(this.options.ackTimeoutMs ?? 10_000)
      .emitWithAck(Events.debug, { trace, ...(clientId ? { clientId } : {}) })) as DebugAck;
    if (!ack.ok) throw ackError(ack.error);
  }

  /** Disconnects and stops reconnecting. */
  close(): void {
    this.stop();
    this.socket.disconnect();
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

/** The error of a refused `reply` or `debug`, retryable as the protocol's catalogue says. */
function ackError(error: AckError): RelayAgentError {
  return new RelayAgentError(
    error.code,
    error.message,
    (AckCodes as Record<string, { retryable: boolean }>)[error.code]?.retryable ?? false,
  );
}
