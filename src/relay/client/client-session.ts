import type { Socket } from 'socket.io';
import { agentAllowed } from '../../auth/agent-patterns';
import type { Logger } from '../../logging/logger';
import type { RuntimeEntry } from '../../store/store';
import type { GuardedEvent, GuardedSocket } from '../event-guard';
import {
  ADMIN_CLIENT_ID,
  errorAck,
  Events,
  HISTORY_DEFAULT_LIMIT,
  SessionClosedCodes,
  type AuthRefresh,
  type ClientMessage,
  type ApprovalRequest,
  type FeedbackRequest,
  type MessageStart,
  type StopRequest,
  type HistoryAck,
  type HistoryRequest,
  type RefreshAck,
  type SendAck,
  type SessionInfo,
} from '../../protocol';
import type { StreamService } from '../streams/stream.service';
import type { UserActions } from '../streams/user-actions';
import type { ReplayGates } from './replay-gate';
import { replayMissed, type Replay } from './replay';
import type { RelayService } from '../relay.service';
import type { ClientSocketData, RelayContext } from '../relay.context';
import { Rooms } from '../rooms';
import { socketEnded } from '../handshake';
import { TokenBucket } from '../../limits/token-bucket';
import { ByteBucket } from '../../limits/byte-bucket';
import { fitPage } from './history-budget';
import { SessionTimers } from './session-timers';
import type { DeadlineQueue } from '../deadline-queue';

const HISTORY_NOT_SERVED =
  "history over this socket's byte budget (HISTORY_BYTES_PER_S), its user's (USER_READ_BYTES_PER_S, USER_MESSAGE_RATE_PER_S) or its send buffer (MAX_SOCKET_BUFFER_BYTES); retry later";

/** What every client session of a namespace shares. */
export interface ClientNamespace {
  ctx: RelayContext;
  relay: RelayService;
  name: string;
  message: GuardedEvent<ClientMessage>;
  refresh: GuardedEvent<AuthRefresh>;
  history: GuardedEvent<HistoryRequest>;
  stop: GuardedEvent<StopRequest>;
  feedback: GuardedEvent<FeedbackRequest>;
  approval: GuardedEvent<ApprovalRequest>;
  /** The operator's events, refused OPERATOR_REQUIRED: a user is never an operator on this socket. */
  operatorOnly: Record<string, GuardedEvent<unknown>>;
  gates: ReplayGates;
  streams: StreamService;
  actions: UserActions;
}

/**
 * One accepted client socket. Idle clients are most of a hub's connections, so a session holds
 * little: what is needed on every event is in `socket.data`, the rate limit is created by the
 * first event (a bucket made then is as full as one made at connect), the logger is made when a
 * line is written, and the session is itself its token's expiry deadline, on a queue with one Node
 * timer for all (see {@link SessionTimers}).
 */
export class ClientSession extends SessionTimers implements GuardedSocket {
  private tokens?: TokenBucket;
  private historyBudget?: ByteBucket;
  /** Settles a turn after the last history reply was written; unset until the first request. */
  private historyTail?: Promise<void>;

  constructor(
    private readonly nsp: ClientNamespace,
    readonly socket: Socket,
  ) {
    super();
  }

  protected get deadlines(): DeadlineQueue {
    return this.nsp.ctx.sessionDeadlines;
  }

  protected get toleranceMs(): number {
    return this.nsp.ctx.config.JWT_CLOCK_TOLERANCE_S * 1000;
  }

  protected onExpiring(expiresAt: string): void {
    this.socket.emit(Events.authExpiring, { expiresAt });
  }

  private get data(): ClientSocketData {
    return this.socket.data as ClientSocketData;
  }

  /** The verified user of this socket. */
  get user(): ClientSocketData {
    return this.data;
  }

  get bucket(): TokenBucket {
    const { config } = this.nsp.ctx;
    return (this.tokens ??= new TokenBucket(config.MESSAGE_RATE_PER_S, config.MESSAGE_RATE_BURST));
  }

  /** A child logger with the connection's fields, made for each use rather than kept per socket. */
  get logger(): Logger {
    // Ids only: the email is personal data, logged once on the connect line (LOG_PERSONAL_DATA).
    const { agentId, clientId } = this.data;
    return this.nsp.ctx.logger.child({ namespace: this.nsp.name, agentId, clientId, socketId: this.socket.id });
  }

  private get presenceEntry(): RuntimeEntry {
    return { socketId: this.socket.id, replicaId: this.nsp.ctx.replicaId };
  }

  /**
   * Joins the rooms, starts the expiry timers, registers presence and sends `session`. With a
   * `lastMessageId`, what the client missed is replayed first; `session` then says whether the
   * replay happened. After it, one `message:start` per open stream of the conversation, with its
   * text and seq so far (docs/streaming.md). Live broadcasts are held meanwhile and written after,
   * less what the replay and the streams' snapshot already hold (see {@link ReplayGates}).
   */
  start(): void {
    const { ctx, gates } = this.nsp;
    const data = this.data;
    const { agentId, clientId, sub } = data;
    const lastMessageId = (this.socket.handshake.auth as { lastMessageId?: unknown } | undefined)?.lastMessageId;
    const recovering = lastMessageId !== undefined;
    gates.hold(this.socket);
    const rooms = [Rooms.client(agentId, clientId), Rooms.clients(agentId), Rooms.subject(sub)];
    if (clientId === ADMIN_CLIENT_ID) rooms.push(Rooms.admins(agentId));
    void this.socket.join(rooms);
    this.reschedule(data.tokenExpiresAt === null ? null : Date.parse(data.tokenExpiresAt));

    const online = Promise.all([ctx.store.presence.addClient(agentId, this.presenceEntry), ctx.store.presence.listRuntimes(agentId)]).then(
      ([, runtimes]) => runtimes.length > 0,
      (err) => {
        this.logger.error({ err }, 'presence unavailable; session reports the agent offline');
        return false;
      },
    );
    const replay: Promise<Replay | undefined> = recovering
      ? replayMissed(ctx, this.nsp.relay.messageLog, this.nsp.relay.users, this.nsp.relay.control, data, lastMessageId, this.logger)
      : Promise.resolve(undefined);
    // Read after the replay (itself read once the rooms' subscriptions are in effect): a delta
    // appended after the read reaches the socket live, one before it is in the snapshot.
    const open = replay
      .then(() => (recovering ? undefined : ctx.subscriptionsSettled()))
      .then(() => this.nsp.streams.snapshot(agentId, clientId))
      .catch((err: unknown): MessageStart[] => {
        this.logger.warn({ err }, 'open streams unavailable; none resumed');
        return [];
      });
    void Promise.all([online, replay, open]).then(([agentOnline, replayed, streams]) => {
      for (const message of replayed?.messages ?? []) this.socket.emit(Events.message, message);
      const session: SessionInfo = {
        clientId,
        agentId,
        agentOnline,
        tokenExpiresAt: data.tokenExpiresAt,
        ...(replayed === undefined ? {} : { recovered: replayed.recovered }),
        ...(replayed?.hasMore ? { hasMore: true } : {}),
      };
      this.socket.emit(Events.session, session);
      for (const stream of streams) this.socket.emit(Events.messageStart, stream);
      gates.release(this.socket, new Set(replayed?.messages.map((m) => m.id)), new Map(streams.map((s) => [s.id, s.seq])));
    });
  }

  send(payload: ClientMessage): SendAck | Promise<SendAck> {
    const checked = this.nsp.relay.checkContent(payload, 'user');
    if (!('content' in checked)) return checked;
    const data = this.data;
    const message = { clientMessageId: payload.clientMessageId, ...checked.content };
    return this.nsp.relay.relayClientMessage({ clientId: data.clientId, sub: data.sub, socketId: this.socket.id }, data.agentId, message);
  }

  /**
   * A page of the conversation, cut to the socket's history budget (HISTORY_BYTES_PER_S) and to
   * what may still be queued for its peer (MAX_SOCKET_BUFFER_BYTES, which history replies count
   * against). A socket's requests are served one at a time, each a turn after the previous reply
   * was written, so each sees what the ones before it queued, and a burst of requests holds one
   * page in memory, not one per request.
   */
  history(request: HistoryRequest): Promise<HistoryAck> {
    const served = (this.historyTail ?? Promise.resolve()).then(() => this.servePage(request));
    const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));
    this.historyTail = served.then(nextTurn, nextTurn);
    return served;
  }

  private async servePage({ before, limit }: HistoryRequest): Promise<HistoryAck> {
    const { config, sendBuffers } = this.nsp.ctx;
    const { conn } = this.socket;
    if (conn.readyState !== 'open') return errorAck('RATE_LIMITED', HISTORY_NOT_SERVED);
    const budget = (this.historyBudget ??= new ByteBucket(config.HISTORY_BYTES_PER_S, config.HISTORY_BYTES_BURST));
    if (budget.available() <= 0) return errorAck('RATE_LIMITED', HISTORY_NOT_SERVED);
    const { users } = this.nsp.relay;
    const { sub } = this.data;
    if (!users.act(sub) || users.readable(sub) <= 0) return errorAck('RATE_LIMITED', HISTORY_NOT_SERVED);
    if (sendBuffers.room(conn) <= 0) {
      // A peer with nothing left under the bound is not reading what it asks for.
      this.logger.info({ maxSocketBufferBytes: sendBuffers.maxBytes }, 'history requested with the send buffer full; closing');
      sendBuffers.close(conn);
      return errorAck('RATE_LIMITED', HISTORY_NOT_SERVED);
    }
    const { agentId, clientId } = this.data;
    const { relay } = this.nsp;
    const read = await relay.messageLog.page(agentId, clientId, before, limit ?? HISTORY_DEFAULT_LIMIT, 'socket');
    const page = { ...read, messages: await relay.control.withoutHeldBroadcasts(agentId, clientId, read.messages) };
    const fitted = fitPage(page, Math.min(budget.available(), sendBuffers.room(conn), users.readable(sub)));
    budget.spend(fitted.bytes);
    users.read(sub, fitted.bytes);
    return { ok: true, messages: fitted.messages, hasMore: fitted.hasMore };
  }

  /**
   * Swaps the session's token. A deactivated `sub` is refused here too (and its session closed):
   * the deactivation broadcast is fire-and-forget, so a session that missed it must not live on by
   * refreshing.
   */
  async refresh({ token }: AuthRefresh): Promise<RefreshAck> {
    const result = this.nsp.ctx.jwt.verify(token);
    if (!result.ok) {
      const code = result.code === 'TOKEN_EXPIRED' ? 'TOKEN_EXPIRED' : 'TOKEN_INVALID';
      return errorAck(code);
    }
    const data = this.data;
    const next = result.identity;
    if (next.sub !== data.sub || next.clientId !== data.clientId) return errorAck('SUB_MISMATCH');
    if (next.agentIds && !agentAllowed(next.agentIds, data.agentId)) {
      return errorAck('TOKEN_INVALID', 'the new token does not allow this agentId');
    }
    let deactivated: boolean;
    try {
      deactivated = await this.nsp.ctx.store.deactivations.isDeactivated(data.sub);
    } catch (err) {
      this.logger.warn({ err }, 'deactivation check failed; refresh refused');
      return errorAck('SERVER_UNAVAILABLE');
    }
    if (deactivated) {
      this.logger.info('refresh of a deactivated user; closing session');
      // After the ack has gone out: the client learns why its refresh failed, then why it is dropped.
      setImmediate(() => {
        closeSession(this.socket, 'USER_DEACTIVATED');
        this.socket.disconnect();
      });
      return errorAck('USER_DEACTIVATED');
    }
    data.tokenExpiresAt = next.expiresAtMs === null ? null : new Date(next.expiresAtMs).toISOString();
    data.roles = next.roles;
    this.reschedule(next.expiresAtMs);
    this.logger.info({ tokenExpiresAt: data.tokenExpiresAt }, 'token refreshed');
    return { ok: true, tokenExpiresAt: data.tokenExpiresAt };
  }

  onAbuse(): void {
    closeSession(this.socket, 'RATE_LIMITED');
  }

  end(reason: string): void {
    const { ctx } = this.nsp;
    this.clear();
    this.nsp.gates.drop(this.socket);
    ctx.metrics.connections.dec({ namespace: this.nsp.name });
    const logger = this.logger;
    logger.info({ reason }, 'client disconnected');
    socketEnded(ctx, this.socket, this.nsp.name, logger);
    ctx.store.presence.removeClient(this.data.agentId, this.presenceEntry).catch((err: unknown) =>
      // Routine while Redis is away (every client leaving then fails alike): throttled, and the entry
      // expires by itself (docs/operations.md).
      ctx.handlerFailures.warn(
        'presence-remove-client',
        err,
        'could not remove a client from presence; its entry expires after PRESENCE_TTL_S',
        logger,
      ),
    );
  }

  protected onExpired(): void {
    this.logger.info('token expired without refresh; closing session');
    closeSession(this.socket, 'TOKEN_EXPIRED');
    this.socket.disconnect();
  }
}

function closeSession(socket: Socket, code: keyof typeof SessionClosedCodes): void {
  socket.emit(Events.sessionClosed, { code, retryable: SessionClosedCodes[code].retryable });
}
