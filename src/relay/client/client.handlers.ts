import type { Namespace, Socket } from 'socket.io';
import type { Logger } from '../../logging/logger';
import type { RuntimeEntry } from '../../store/store';
import { runGuarded, type GuardedEvent, type GuardedSocket } from '../event-guard';
import { payloadError } from '../payload-limits';
import {
  ADMIN_CLIENT_ID,
  Events,
  SessionClosedCodes,
  type AuthRefresh,
  type ClientMessage,
  type RefreshAck,
  type SendAck,
  type SessionInfo,
} from '../protocol';
import { isAuthRefresh, isClientMessage } from '../protocol.schemas';
import { errorAck, type RelayService } from '../relay.service';
import type { ClientSocketData, RelayContext } from '../relay.context';
import { Rooms } from '../rooms';
import { TokenBucket } from '../token-bucket';
import { SessionTimers } from './session-timers';

/** What every client session of a namespace shares. */
interface ClientNamespace {
  ctx: RelayContext;
  relay: RelayService;
  name: string;
  message: GuardedEvent<ClientMessage>;
  refresh: GuardedEvent<AuthRefresh>;
}

/** Handles accepted browser clients: rooms, `session`, `message`, token expiry and refresh. */
export function registerClientHandlers(ctx: RelayContext, nsp: Namespace, relay: RelayService): void {
  const { config, metrics } = ctx;
  const shared: ClientNamespace = {
    ctx,
    relay,
    name: nsp.name,
    message: { event: Events.message, maxStrikes: config.MESSAGE_RATE_BURST, validate: isClientMessage, metrics },
    refresh: { event: Events.authRefresh, maxStrikes: config.MESSAGE_RATE_BURST, validate: isAuthRefresh, metrics },
  };
  nsp.on('connection', (socket: Socket) => {
    const session = new ClientSession(shared, socket);
    metrics.connections.inc({ namespace: nsp.name });
    socket.on(Events.message, (...args: unknown[]) => runGuarded(shared.message, session, args, (payload) => session.send(payload)));
    socket.on(Events.authRefresh, (...args: unknown[]) => runGuarded(shared.refresh, session, args, (payload) => session.refresh(payload)));
    socket.on('disconnect', (reason: string) => session.end(reason));
    session.start();
  });
}

/**
 * One accepted client socket. Idle clients are most of a hub's connections, so a session holds
 * little: what is needed on every event is in `socket.data`, the rate limit is created by the
 * first event (a bucket made then is as full as one made at connect), the logger is made when a
 * line is written, and the expiry timers share one Node timer (see {@link SessionTimers}).
 */
class ClientSession implements GuardedSocket {
  private tokens?: TokenBucket;
  private readonly timers: SessionTimers;

  constructor(
    private readonly nsp: ClientNamespace,
    readonly socket: Socket,
  ) {
    this.timers = new SessionTimers(
      nsp.ctx.sessionDeadlines,
      nsp.ctx.config.JWT_CLOCK_TOLERANCE_S * 1000,
      (expiresAt) => socket.emit(Events.authExpiring, { expiresAt }),
      () => this.expired(),
    );
  }

  private get data(): ClientSocketData {
    return this.socket.data as ClientSocketData;
  }

  get bucket(): TokenBucket {
    const { config } = this.nsp.ctx;
    return (this.tokens ??= new TokenBucket(config.MESSAGE_RATE_PER_S, config.MESSAGE_RATE_BURST));
  }

  /** A child logger with the connection's fields, made for each use rather than kept per socket. */
  get logger(): Logger {
    const { agentId, clientId, email } = this.data;
    return this.nsp.ctx.logger.child({ namespace: this.nsp.name, agentId, clientId, email, socketId: this.socket.id });
  }

  private get presenceEntry(): RuntimeEntry {
    return { socketId: this.socket.id, replicaId: this.nsp.ctx.replicaId };
  }

  /** Joins the rooms, starts the expiry timers, registers presence and sends `session`. */
  start(): void {
    const { ctx } = this.nsp;
    const data = this.data;
    const { agentId, clientId, sub } = data;
    const rooms = [Rooms.client(agentId, clientId), Rooms.clients(agentId), Rooms.subject(sub)];
    if (clientId === ADMIN_CLIENT_ID) rooms.push(Rooms.admins(agentId));
    this.socket.join(rooms);
    this.timers.reschedule(data.tokenExpiresAt === null ? null : Date.parse(data.tokenExpiresAt));

    const emitSession = (agentOnline: boolean) => {
      const session: SessionInfo = { clientId, agentId, agentOnline, tokenExpiresAt: data.tokenExpiresAt };
      this.socket.emit(Events.session, session);
    };
    Promise.all([ctx.store.presence.addClient(agentId, this.presenceEntry), ctx.store.presence.listRuntimes(agentId)]).then(
      ([, runtimes]) => emitSession(runtimes.length > 0),
      (err) => {
        this.logger.error({ err }, 'presence unavailable; session reports the agent offline');
        emitSession(false);
      },
    );
  }

  send(payload: ClientMessage): SendAck | Promise<SendAck> {
    const tooLarge = payloadError(payload.text, payload.data, this.nsp.ctx.config.MAX_MESSAGE_BYTES);
    if (tooLarge) return errorAck(tooLarge);
    const data = this.data;
    return this.nsp.relay.relayClientMessage(data, data.agentId, payload);
  }

  refresh({ token }: AuthRefresh): RefreshAck {
    const result = this.nsp.ctx.jwt.verify(token);
    if (!result.ok) {
      const code = result.code === 'TOKEN_EXPIRED' ? 'TOKEN_EXPIRED' : 'TOKEN_INVALID';
      return errorAck(code);
    }
    const data = this.data;
    const next = result.identity;
    if (next.sub !== data.sub || next.clientId !== data.clientId) return errorAck('SUB_MISMATCH');
    if (next.agentIds && !next.agentIds.includes(data.agentId)) {
      return errorAck('TOKEN_INVALID', 'the new token does not allow this agentId');
    }
    data.tokenExpiresAt = next.expiresAtMs === null ? null : new Date(next.expiresAtMs).toISOString();
    data.roles = next.roles;
    this.timers.reschedule(next.expiresAtMs);
    this.logger.info({ tokenExpiresAt: data.tokenExpiresAt }, 'token refreshed');
    return { ok: true, tokenExpiresAt: data.tokenExpiresAt };
  }

  onAbuse(): void {
    closeSession(this.socket, 'RATE_LIMITED');
  }

  end(reason: string): void {
    const { ctx } = this.nsp;
    this.timers.clear();
    ctx.metrics.connections.dec({ namespace: this.nsp.name });
    const logger = this.logger;
    logger.info({ reason }, 'client disconnected');
    ctx.store.presence
      .removeClient(this.data.agentId, this.presenceEntry)
      .catch((err) => logger.error({ err }, 'could not remove client from presence'));
  }

  private expired(): void {
    this.logger.info('token expired without refresh; closing session');
    closeSession(this.socket, 'TOKEN_EXPIRED');
    this.socket.disconnect();
  }
}

function closeSession(socket: Socket, code: keyof typeof SessionClosedCodes): void {
  socket.emit(Events.sessionClosed, { code, retryable: SessionClosedCodes[code].retryable });
}
