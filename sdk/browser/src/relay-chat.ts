import { io, type Socket } from 'socket.io-client';
import {
  ClientEvents as Events,
  type ApprovalDecision,
  type ClientMessage,
  type ClientToHubEvents,
  type ClientAuth,
  type HandshakeErrorData,
  type HistoryRequest,
  type HubToClientEvents,
  type Rating,
  type SessionClosed,
} from '../../../src/protocol';
import { Backoff } from './backoff';
import { catchUp } from './catch-up';
import { classifyHandshake, classifySessionClosed, closedError, errorFromAck, RelayChatError } from './codes';
import type { ConnectionState, RelayChatEvents, SendOptions, StateChange } from './chat-events';
import { Emitter } from './emitter';
import { Inbox, type Replay } from './inbox';
import { historyPage, historyRequest, type HistoryOptions, type HistoryPage } from './history';
import { resolveEndpoint, type Endpoint, type RelayChatOptions } from './options';
import { Outbox, type SendResult } from './outbox';
import { checkPayload } from './payload';
import { request } from './request';
import { TokenSource } from './token-source';
import { watchWakeSignals } from './wake-signals';

type ClientSocket = Socket<HubToClientEvents, ClientToHubEvents>;

/** One connection attempt's socket: what its listeners share. */
interface Attempt extends Replay {
  /** The resume point the handshake carried. */
  lastMessageId: string | undefined;
  /** Why the hub closed the session, when it said so before disconnecting. */
  closedBy?: SessionClosed;
}

/**
 * A chat connection from a web page to one bot through a relay hub. It connects on construction,
 * reconnects on its own with backoff and fresh tokens, and queues messages sent while offline.
 *
 * @example
 * const chat = new RelayChat({ url: 'https://relay.example.com', agentId: 'support-bot', token: getToken });
 * chat.on('state', ({ state, code }) => setBanner(state === 'disconnected' ? `Chat ended (${code})` : state));
 * chat.on('message', (m) => render(m.author, m.text));
 * chat.on('gap', () => chat.history().then(({ messages }) => rerender(messages)));
 * chat.on('error', (e) => console.warn(e.code, e.message));
 * const { id } = await chat.send('Hello!');
 * chat.close();
 */
export class RelayChat extends Emitter<RelayChatEvents> {
  private readonly endpoint: Endpoint;
  private readonly tokens: TokenSource;
  private readonly backoff: Backoff;
  private readonly outbox: Outbox;
  private readonly inbox: Inbox;
  private readonly unwatch: () => void;
  private current: ConnectionState = 'connecting';
  private socket: ClientSocket | undefined;
  private retryTimer: ReturnType<typeof setTimeout> | undefined;
  private sessionTimer: ReturnType<typeof setTimeout> | undefined;
  private stopped = false;
  private invalidRetried = false;
  /**
   * The `lastMessageId` of a replay the hub cut to its byte bound, while the older missed messages
   * are still being paged in: a reconnect meanwhile resumes from it again, not from the newest
   * message the cut replay handed over, so none of them is skipped.
   */
  private catchUpFrom: string | undefined;

  constructor(options: RelayChatOptions) {
    super();
    this.endpoint = resolveEndpoint(options);
    this.tokens = new TokenSource(options.token, options.tokenTimeoutMs);
    this.backoff = new Backoff(options.backoff);
    this.outbox = new Outbox(options.outboxLimit);
    const { uri, path, agentId } = this.endpoint;
    this.inbox = new Inbox((event, payload) => this.emit(event, payload), this.outbox, options, [uri, path, agentId]);
    this.unwatch = watchWakeSignals(() => this.wake());
    // Deferred so listeners added right after `new` see the first state.
    queueMicrotask(() => {
      if (this.stopped) return;
      this.emit('state', { state: 'connecting' });
      void this.connect();
    });
  }

  /** The connection state now. */
  get state(): ConnectionState {
    return this.current;
  }

  /**
   * Sends a message to the bot. Resolves with the hub's `{ id, ts }` once a bot runtime has received
   * it; rejects with a {@link RelayChatError}: an error ack code (`AGENT_OFFLINE`, `TIMEOUT`,
   * `RATE_LIMITED`, …), `OUTBOX_FULL`, `PAYLOAD_TOO_LARGE`, `INVALID_PAYLOAD`, or `CLOSED` / the
   * terminal code when the chat stops first. Offline sends wait in the outbox and go out in order.
   * `options` may carry `data` and `parts` (a user's `file` and `data` parts, docs/browser-sdk.md).
   */
  send(text: string, options: SendOptions = {}): Promise<SendResult> {
    if (this.stopped) return Promise.reject(closedError());
    const { data, parts, ...rest } = options;
    // `send(text, data)` of earlier releases would lose its data silently here.
    const invalid = Object.keys(rest).length
      ? new RelayChatError('INVALID_PAYLOAD', 'send(text, { data, parts })')
      : checkPayload(text, data, this.endpoint.maxMessageBytes, parts);
    if (invalid) return Promise.reject(invalid);
    const result = this.outbox.add(text, data, parts);
    this.flush();
    return result;
  }

  /**
   * Loads a page of the conversation's earlier messages: the newest `limit` (default 50, at most
   * 100) older than `before`, or the newest of all without it; `messages` are oldest first, and
   * `hasMore` says whether older ones remain (pass `messages[0].id` as the next `before`).
   * The ids returned count as seen, so a later replay of them is not emitted as `message`.
   *
   * It needs a live connection and does not wait for one: while the chat is `connecting` it rejects
   * at once with `NOT_CONNECTED` (retryable), so call it from the `connected` state event (or on
   * `gap`). It also rejects with `NOT_CONNECTED` when the connection drops before the answer, with
   * `TIMEOUT` after `ackTimeoutMs`, with the hub's ack code (`INVALID_PAYLOAD`, `RATE_LIMITED`,
   * `SERVER_UNAVAILABLE`, …), and with `CLOSED` after `close()`.
   */
  history(options?: HistoryOptions): Promise<HistoryPage> {
    const request = historyRequest(options);
    if (request instanceof RelayChatError) return Promise.reject(request);
    const socket = this.socket;
    return this.ask(Events.history, request).then((ack) =>
      this.inbox.paged(historyPage(ack), request.before === undefined && socket === this.socket),
    );
  }

  /**
   * Stops a streamed answer: the stream `id`, or without it the newest open stream, or (before the
   * answer has started) the one to the user's last message. Resolves once the hub has passed the stop
   * on; the stream then ends with status `cancelled` (`message:end`). Rejects with
   * `STREAM_NOT_FOUND` when there is nothing to stop, and like `history()` without a connection.
   */
  stop(id?: string): Promise<void> {
    const target = id ?? this.inbox.streams.latest();
    const cmid = this.inbox.lastClientMessageId;
    const payload = target !== undefined ? { id: target } : cmid !== undefined ? { clientMessageId: cmid } : undefined;
    if (!payload) return Promise.reject(new RelayChatError('STREAM_NOT_FOUND', 'no answer to stop'));
    return this.ask(Events.stop, payload).then(() => {});
  }

  /**
   * Rates a bot message: `'up'`, `'down'`, or `null` to withdraw a rating; a later rating replaces an
   * earlier one. Rejects with `MESSAGE_NOT_FOUND` for an id that is not a bot message of this
   * conversation, `INVALID_PAYLOAD` for a bad rating or a comment over 1000 characters.
   */
  feedback(id: string, rating: Rating | null, comment?: string): Promise<void> {
    if (rating !== null && rating !== 'up' && rating !== 'down') {
      return Promise.reject(new RelayChatError('INVALID_PAYLOAD', "rating must be 'up', 'down' or null"));
    }
    // An undefined `comment` (or `reason` below) does not survive JSON: the hub sees none.
    return this.ask(Events.feedback, { id, rating, comment }).then(() => {});
  }

  /**
   * Decides on a tool call the bot asked to approve: the part in message `messageId` with approval
   * `approvalId`. Resolves with the recorded decision, which every tab then shows (the part moves
   * to `approval-responded`). Rejects with `APPROVAL_DECIDED` when another decision was recorded
   * first, `APPROVAL_EXPIRED`, `MESSAGE_NOT_FOUND`, and like `history()` without a connection.
   */
  approve(messageId: string, approvalId: string, approved: boolean, reason?: string): Promise<ApprovalDecision> {
    return this.ask(Events.approval, { messageId, approvalId, approved, reason }).then((ack) => ack.decision);
  }

  private ask<E extends 'history' | 'stop' | 'feedback' | 'approval'>(event: E, payload: Parameters<ClientToHubEvents[E]>[0]) {
    return request(this.socket, this.current === 'connected', event, payload, this.endpoint.ackTimeoutMs, () => this.stopped);
  }

  /** Disconnects for good; pending sends reject with `CLOSED`. */
  close(): void {
    if (!this.stopped) this.halt();
  }

  private async connect(): Promise<void> {
    this.retryTimer = undefined;
    let token: string;
    try {
      token = await this.tokens.get();
    } catch (err) {
      if (this.stopped) return;
      this.emit('error', err as RelayChatError);
      return this.retry();
    }
    if (this.stopped) return;

    const { uri, path, agentId } = this.endpoint;
    const stored = this.inbox.resume.forToken(token);
    const lastMessageId = this.catchUpFrom ?? stored;
    // Without a resume point, `lastMessageId: undefined` is left out of the handshake's JSON.
    const auth: ClientAuth = { token, agentId, lastMessageId };
    // socket.io's own reconnection cannot recover from a middleware rejection and would reuse a
    // stale token, so every attempt is a fresh socket that this class retries itself.
    const socket: ClientSocket = io(uri, {
      path,
      transports: ['websocket'],
      forceNew: true,
      reconnection: false,
      auth: (cb) => cb(auth),
    });
    this.socket = socket;
    const attempt: Attempt = { lastMessageId };
    this.followSession(socket, attempt);
    this.inbox.follow(socket, attempt);
  }

  /** The socket's connection and session: `connected` once the hub sent `session`, retries, stops. */
  private followSession(socket: ClientSocket, attempt: Attempt): void {
    const { lastMessageId } = attempt;
    const context = () => ({ refreshable: this.tokens.refreshable, invalidRetried: this.invalidRetried });
    socket.on('connect', () => {
      this.invalidRetried = false;
      // A hub that accepted the socket but never sends `session` (its shared state hangs) would
      // otherwise leave the chat connecting for good, with its outbox held.
      this.sessionTimer = setTimeout(() => {
        if (socket !== this.socket) return;
        this.dispose(socket);
        this.emit('error', new RelayChatError('CONNECT_FAILED', 'the hub sent no session', true));
        this.retry();
      }, this.endpoint.ackTimeoutMs);
    });
    socket.on('connect_error', (err) => {
      this.dispose(socket);
      const data = (err as Error & { data?: Partial<HandshakeErrorData> }).data;
      const code = typeof data?.code === 'string' ? data.code : undefined;
      if (classifyHandshake(code, data?.retryable, context()) === 'stop') return this.halt(code);
      if (code === 'TOKEN_INVALID') this.invalidRetried = true;
      this.emit('error', new RelayChatError(code ?? 'CONNECT_FAILED', err.message, true));
      this.retry();
    });
    socket.on('disconnect', (reason) => {
      this.dispose(socket);
      const { closedBy } = attempt;
      if (reason === 'io server disconnect') {
        if (classifySessionClosed(closedBy?.code, closedBy?.retryable, context()) === 'stop') return this.halt(closedBy?.code);
      }
      this.setState('connecting', closedBy?.code);
      this.retry();
    });
    socket.on(Events.authExpiring, () => {
      if (this.tokens.refreshable) void this.refresh(socket);
    });
    socket.on(Events.sessionClosed, (info) => {
      attempt.closedBy = info;
    });
    // `connected` waits for `session`: it says whether the replay (sent before it) was complete.
    socket.on(Events.session, (info) => {
      clearTimeout(this.sessionTimer);
      this.inbox.streams.reconnected();
      this.backoff.reset();
      const recovered = lastMessageId !== undefined && typeof info?.recovered === 'boolean' ? info.recovered : undefined;
      this.setState('connected', undefined, recovered);
      if (socket !== this.socket) return;
      this.emit('session', info);
      this.emit('agent:status', { agentId: info.agentId, online: info.agentOnline });
      attempt.inSession = true;
      // A resumed session's replay was complete, impossible (a gap), or cut to the hub's byte bound
      // (`hasMore`): then the missed messages older than it are paged in (catch-up.ts).
      if (recovered !== undefined && lastMessageId !== undefined) {
        this.catchUpFrom = undefined;
        if (!recovered) this.emit('gap', { lastMessageId });
        else if (info.hasMore === true) {
          this.catchUpFrom = lastMessageId;
          const load = (request: HistoryRequest) => this.ask(Events.history, request);
          // `halt()` drops the socket, so a current socket is one the chat still follows.
          void catchUp(load, () => socket === this.socket, lastMessageId, attempt.replayedFrom, this.inbox).then((failed) => {
            if (socket !== this.socket) return;
            this.catchUpFrom = undefined;
            if (failed) {
              this.emit('error', failed);
              this.emit('gap', { lastMessageId });
            }
          });
        }
      }
      this.flush();
    });
  }

  /** Hands the hub a fresh token before the current one expires, keeping the session open. */
  private async refresh(socket: ClientSocket): Promise<void> {
    let token: string;
    try {
      token = await this.tokens.get();
    } catch (err) {
      // Nothing else to do: at expiry the hub closes the session and the reconnect fetches again.
      this.emit('error', err as RelayChatError);
      return;
    }
    if (socket !== this.socket || !socket.connected) return;
    socket.timeout(this.endpoint.ackTimeoutMs).emit(Events.authRefresh, { token }, (err, ack) => {
      if (socket !== this.socket) return;
      if (err) this.emit('error', new RelayChatError('TIMEOUT', 'auth:refresh: no answer in time', true));
      else if (!ack?.ok) this.emit('error', errorFromAck(ack?.error, 'auth:refresh refused'));
    });
  }

  /** Puts the oldest unacknowledged message on the wire, one at a time so the bot sees send order. */
  private flush(): void {
    const socket = this.socket;
    const entry = this.outbox.head();
    if (!socket?.connected || this.current !== 'connected' || !entry || entry.flight) return;
    const flight = {};
    entry.flight = flight;
    const { clientMessageId, text, data, parts } = entry;
    // `data` and `parts` left undefined are left out of the JSON.
    const payload: ClientMessage = { clientMessageId, text, data, parts };
    this.inbox.lastClientMessageId = clientMessageId;
    socket.timeout(this.endpoint.ackTimeoutMs).emit(Events.message, payload, (err, ack) => {
      // A transmission lost with its connection is grounded; the entry goes again after the reconnect.
      if (entry.flight !== flight) return;
      // The message is in the conversation now; a replay of it must not come back as an inbound one.
      // Nor does its id become the resume point: the ack comes straight back, while replies logged
      // before the message may still be on their way to this socket.
      if (!err && ack?.ok) this.inbox.seen.seen(ack.id);
      this.outbox.settle(
        entry,
        err
          ? { error: new RelayChatError('TIMEOUT', 'no answer in time') }
          : ack?.ok
            ? { result: { id: ack.id, ts: ack.ts } }
            : { error: errorFromAck(ack?.error, 'message refused') },
      );
      this.flush();
    });
  }

  private retry(): void {
    if (this.stopped) return;
    this.setState('connecting');
    this.retryTimer = setTimeout(() => void this.connect(), this.backoff.next());
  }

  /** Cuts a pending backoff delay short; an attempt already under way is left alone. */
  private wake(): void {
    if (this.retryTimer === undefined || this.stopped) return;
    clearTimeout(this.retryTimer);
    void this.connect();
  }

  private dispose(socket: ClientSocket): void {
    // Grounded first: closing fails the socket's pending acks, and those must not settle anything.
    this.outbox.groundAll();
    clearTimeout(this.sessionTimer);
    socket.off();
    socket.close();
    if (this.socket === socket) this.socket = undefined;
  }

  private halt(code?: string): void {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    this.unwatch();
    if (this.socket) this.dispose(this.socket);
    this.outbox.rejectAll(code ? new RelayChatError(code, `the chat stopped: ${code}`) : closedError());
    this.setState('disconnected', code);
  }

  private setState(state: ConnectionState, code?: string, recovered?: boolean): void {
    if (state === this.current) return;
    this.current = state;
    const change: StateChange = { state };
    if (code !== undefined) change.code = code;
    if (recovered !== undefined) change.recovered = recovered;
    this.emit('state', change);
  }
}
