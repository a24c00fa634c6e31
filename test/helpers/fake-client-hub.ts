import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server, type Socket as ServerSocket } from 'socket.io';
import {
  Authors,
  Events,
  HISTORY_DEFAULT_LIMIT,
  Namespaces,
  type ApprovalAck,
  type ApprovalRequest,
  type ClientAuth,
  type ClientInboundMessage,
  type ClientMessage,
  type FeedbackRequest,
  type HandshakeErrorData,
  type HistoryAck,
  type HistoryRequest,
  type MessageEnd,
  type MessageStart,
  type OkAck,
  type SendAck,
  type SessionInfo,
  type StopRequest,
  type StreamStatus,
} from '../../src/protocol';
import type { RelayChat, RelayChatEvents } from '../../sdk/browser/src';

/**
 * A stand-in for the hub's client namespace: the embed SDK is exercised against a real Socket.IO
 * server whose handshake verdicts and acks each test scripts, without the rest of the hub. It keeps
 * a conversation log the way docs/protocol.md ("Recovery") describes, so recovery (`lastMessageId`, `recovered`) and the
 * `history` event behave like the hub's unless a test overrides them.
 */
export class FakeClientHub {
  readonly io: Server;
  readonly received: ClientMessage[] = [];
  /** Every `approval` decision, in order. */
  readonly approvals: ApprovalRequest[] = [];
  /** Answer to `approval`; default: the decision recorded. */
  approvalAck: (req: ApprovalRequest) => ApprovalAck = (req) => ({
    ok: true,
    decision: { approved: req.approved, ...(req.reason ? { reason: req.reason } : {}), decidedBy: 'u1', ts: 'now' },
  });
  readonly tokens: string[] = [];
  /** The handshake `auth` of every attempt, accepted or not. */
  readonly auths: ClientAuth[] = [];
  readonly sockets: ServerSocket[] = [];
  /** Every `history` request, in order. */
  readonly historyRequests: HistoryRequest[] = [];
  /** The conversation log, oldest first. */
  readonly log: ClientInboundMessage[] = [];
  /** Handshake verdict per token; `undefined` accepts. */
  refuse: (token: string) => HandshakeErrorData | undefined = () => undefined;
  /** Ack for a received message; `undefined` leaves it unacknowledged. */
  ack: (msg: ClientMessage, socket: ServerSocket) => SendAck | undefined = (msg) => ({
    ok: true,
    id: `h-${msg.clientMessageId}`,
    ts: 'now',
  });
  /** Acks of `history` requests left unanswered by {@link history}, to answer later. */
  readonly pendingHistory: Array<(res: HistoryAck) => void> = [];
  /** Answer to a `history` request; `undefined` leaves it in {@link pendingHistory}. Default: a page of {@link log}. */
  history: (req: HistoryRequest) => HistoryAck | undefined = (req) => this.page(req);
  /**
   * What a handshake with `lastMessageId` gets: the messages to replay before `session` with
   * `recovered: true`, or `false` for `recovered: false`. Default: everything after that id in
   * {@link log}, or false when the id is not there. `undefined` plays a hub without a log: no
   * replay and no `recovered` field.
   */
  recover: (lastMessageId: string) => ClientInboundMessage[] | false | undefined = (id) => {
    const at = this.log.findIndex((m) => m.id === id);
    // Open streams are left out of a replay: the resume after it sends them (message:start).
    return at === -1 ? false : this.log.slice(at + 1).filter((m) => !this.open.has(m.id));
  };
  /** Streams of the conversation that are open: announced with `message:start` after every `session`. */
  readonly open = new Map<string, MessageStart>();
  /** Every `stop` and `feedback` request, in order. */
  readonly stops: StopRequest[] = [];
  readonly feedbacks: FeedbackRequest[] = [];
  stopAck: (req: StopRequest) => OkAck = () => ({ ok: true });
  feedbackAck: (req: FeedbackRequest) => OkAck = () => ({ ok: true });
  /** Whether a connection gets `session` (and any replay); false plays a hub whose shared state hangs. */
  sendsSession: () => boolean = () => true;
  private readonly waiters: Array<() => void> = [];
  private sequence = 0;

  private constructor(
    http: HttpServer,
    readonly url: string,
  ) {
    this.io = new Server(http, { transports: ['websocket'] });
    const ns = this.io.of(Namespaces.client);
    ns.use((socket, next) => {
      const auth = socket.handshake.auth as ClientAuth;
      this.auths.push(auth);
      this.tokens.push(auth.token);
      const data = this.refuse(auth.token);
      if (!data) return next();
      next(Object.assign(new Error(data.code), { data }));
    });
    ns.on('connection', (socket) => {
      this.sockets.push(socket);
      const { lastMessageId } = socket.handshake.auth as ClientAuth;
      const session: SessionInfo = { clientId: 'u1', agentId: 'bot', agentOnline: true, tokenExpiresAt: null };
      if (!this.sendsSession()) {
        // nothing: the socket stays open and silent
      } else if (lastMessageId !== undefined) {
        const replay = this.recover(lastMessageId);
        for (const message of replay || []) socket.emit(Events.message, message);
        if (replay !== undefined) session.recovered = replay !== false;
        socket.emit(Events.session, session);
        for (const stream of this.open.values()) socket.emit(Events.messageStart, stream);
      } else {
        socket.emit(Events.session, session);
        for (const stream of this.open.values()) socket.emit(Events.messageStart, stream);
      }
      socket.on(Events.stop, (req: StopRequest, ack: (res: OkAck) => void) => {
        this.stops.push(req);
        ack(this.stopAck(req));
        this.notify();
      });
      socket.on(Events.approval, (req: ApprovalRequest, ack: (res: ApprovalAck) => void) => {
        this.approvals.push(req);
        ack(this.approvalAck(req));
        this.notify();
      });
      socket.on(Events.feedback, (req: FeedbackRequest, ack: (res: OkAck) => void) => {
        this.feedbacks.push(req);
        ack(this.feedbackAck(req));
        this.notify();
      });
      socket.on(Events.message, (msg: ClientMessage, ack: (res: SendAck) => void) => {
        this.received.push(msg);
        const res = this.ack(msg, socket);
        if (res) ack(res);
        this.notify();
      });
      socket.on(Events.history, (req: HistoryRequest, ack: (res: HistoryAck) => void) => {
        this.historyRequests.push(req);
        const res = this.history(req);
        if (res) ack(res);
        else this.pendingHistory.push(ack);
        this.notify();
      });
      this.notify();
    });
  }

  static async start(port = 0): Promise<FakeClientHub> {
    const http = createServer();
    await new Promise<void>((resolve) => http.listen(port, '127.0.0.1', resolve));
    return new FakeClientHub(http, `http://127.0.0.1:${(http.address() as AddressInfo).port}`);
  }

  /** A new message of the conversation, appended to the log (ids sort in log order). */
  message(text: string, extra: Partial<ClientInboundMessage> = {}): ClientInboundMessage {
    const id = `m${String(++this.sequence).padStart(4, '0')}`;
    return { id, ts: 'now', agentId: 'bot', author: Authors.agent, text, ...extra };
  }

  /** Logs a bot message and delivers it to every connected socket, as a hub does with a reply. */
  publish(text: string, extra: Partial<ClientInboundMessage> = {}): ClientInboundMessage {
    const message = this.message(text, extra);
    this.log.push(message);
    for (const socket of this.sockets) if (socket.connected) socket.emit(Events.message, message);
    return message;
  }

  /**
   * Opens a stream (its id sorts in log order) and announces it to every connected socket. Like the
   * hub, the log holds it at its start with text '' (history shows it so) until its end.
   */
  startStream(text = '', extra: Partial<MessageStart> = {}, announce = true): MessageStart {
    const { id, ts, agentId } = this.message(text);
    const start: MessageStart = { id, ts, agentId, author: Authors.agent, text, seq: 0, ...extra };
    this.open.set(id, start);
    this.log.push({ id, ts, agentId, author: Authors.agent, text: '' });
    if (announce) this.emitAll(Events.messageStart, start);
    return start;
  }

  /** Appends `text` to an open stream and sends the delta (`seq` overrides the next one, to play a gap). */
  delta(id: string, text: string, seq?: number): void {
    const open = this.open.get(id)!;
    open.seq += 1;
    open.text += text;
    this.emitAll(Events.messageDelta, { id, seq: seq ?? open.seq, text });
  }

  /** Ends an open stream: its final message replaces its start in the log and `message:end` to every socket. */
  endStream(id: string, status: StreamStatus = 'complete', text?: string): MessageEnd {
    const open = this.open.get(id)!;
    this.open.delete(id);
    const end: MessageEnd = { id, ts: open.ts, agentId: open.agentId, author: Authors.agent, text: text ?? open.text, status };
    this.log[this.log.findIndex((m) => m.id === id)] = {
      id,
      ts: end.ts,
      agentId: end.agentId,
      author: Authors.agent,
      text: end.text,
      ...(status === 'complete' ? {} : { status }),
    };
    this.emitAll(Events.messageEnd, end);
    return end;
  }

  /** Sends `event` to every connected socket. */
  emitAll(event: string, payload: unknown): void {
    for (const socket of this.sockets) if (socket.connected) socket.emit(event, payload);
  }

  /** The hub's answer to `history`: the newest `limit` messages older than `before`. */
  page({ before, limit = HISTORY_DEFAULT_LIMIT }: HistoryRequest): HistoryAck {
    const end = before === undefined ? this.log.length : this.log.findIndex((m) => m.id === before);
    if (end === -1) return { ok: true, messages: [], hasMore: false };
    const start = Math.max(0, end - limit);
    return { ok: true, messages: this.log.slice(start, end), hasMore: start > 0 };
  }

  /** Resolves once `condition` holds, re-checked after every connection, message and history request. */
  until(condition: () => boolean): Promise<void> {
    if (condition()) return Promise.resolve();
    return new Promise((resolve) => {
      const check = () => (condition() ? resolve() : this.waiters.push(check));
      this.waiters.push(check);
    });
  }

  get last(): ServerSocket {
    return this.sockets[this.sockets.length - 1];
  }

  async stop(): Promise<void> {
    await this.io.close();
  }

  private notify(): void {
    for (const waiter of this.waiters.splice(0)) waiter();
  }
}

/** The next `event` of the SDK's `chat` that `matches` (a raw socket's: ./hub's `nextEvent`). */
export function nextChatEvent<K extends keyof RelayChatEvents>(
  chat: RelayChat,
  event: K,
  matches: (payload: RelayChatEvents[K]) => boolean = () => true,
): Promise<RelayChatEvents[K]> {
  return new Promise((resolve) => {
    const off = chat.on(event, (payload) => {
      if (!matches(payload)) return;
      off();
      resolve(payload);
    });
  });
}

/** Resolves when the SDK's `chat` is connected (a raw socket: ./hub's `connected`). */
export const chatConnected = (chat: RelayChat) => nextChatEvent(chat, 'state', (s) => s.state === 'connected');
/** Resolves when the SDK's `chat` has disconnected for good. */
export const chatStopped = (chat: RelayChat) => nextChatEvent(chat, 'state', (s) => s.state === 'disconnected');

/** An unsigned JWT-shaped token carrying `sub` (the fake hub does not verify; the SDK only reads `sub`). */
export function fakeJwt(sub: string): string {
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${part({ alg: 'none', typ: 'JWT' })}.${part({ sub, exp: 4_000_000_000 })}.sig`;
}
