import type { Namespace, Socket } from 'socket.io';
import { guardEvent } from '../event-guard';
import { payloadError } from '../payload-limits';
import { ADMIN_CLIENT_ID, Events, SessionClosedCodes, type RefreshAck, type SessionInfo } from '../protocol';
import { isAuthRefresh, isClientMessage } from '../protocol.schemas';
import { errorAck, type RelayService } from '../relay.service';
import type { ClientSocketData, RelayContext } from '../relay.context';
import { Rooms } from '../rooms';
import { TokenBucket } from '../token-bucket';
import { SessionTimers } from './session-timers';

/** Handles accepted browser clients: rooms, `session`, `message`, token expiry and refresh. */
export function registerClientHandlers(ctx: RelayContext, nsp: Namespace, relay: RelayService): void {
  const { config, metrics } = ctx;
  nsp.on('connection', (socket: Socket) => {
    const data = socket.data as ClientSocketData;
    const { agentId, clientId, sub } = data;
    const entry = { socketId: socket.id, replicaId: ctx.replicaId };
    const logger = ctx.logger.child({ namespace: nsp.name, agentId, clientId, email: data.email, socketId: socket.id });
    const bucket = new TokenBucket(config.MESSAGE_RATE_PER_S, config.MESSAGE_RATE_BURST);
    const guard = {
      socket,
      bucket,
      maxStrikes: config.MESSAGE_RATE_BURST,
      metrics,
      logger,
      onAbuse: () => closeSession(socket, 'RATE_LIMITED'),
    };
    const timers = new SessionTimers(
      config.JWT_CLOCK_TOLERANCE_S * 1000,
      (expiresAt) => socket.emit(Events.authExpiring, { expiresAt }),
      () => {
        logger.info('token expired without refresh; closing session');
        closeSession(socket, 'TOKEN_EXPIRED');
        socket.disconnect();
      },
    );
    metrics.connections.inc({ namespace: nsp.name });

    socket.on(
      Events.message,
      guardEvent({ ...guard, event: Events.message, validate: isClientMessage }, (payload) => {
        const tooLarge = payloadError(payload.text, payload.data, config.MAX_MESSAGE_BYTES);
        if (tooLarge) return errorAck(tooLarge);
        return relay.relayClientMessage({ clientId, sub }, agentId, payload);
      }),
    );
    socket.on(
      Events.authRefresh,
      guardEvent({ ...guard, event: Events.authRefresh, validate: isAuthRefresh }, ({ token }): RefreshAck => {
        const result = ctx.jwt.verify(token);
        if (!result.ok) {
          const code = result.code === 'TOKEN_EXPIRED' ? 'TOKEN_EXPIRED' : 'TOKEN_INVALID';
          return errorAck(code);
        }
        const next = result.identity;
        if (next.sub !== sub || next.clientId !== clientId) return errorAck('SUB_MISMATCH');
        if (next.agentIds && !next.agentIds.includes(agentId)) {
          return errorAck('TOKEN_INVALID', 'the new token does not allow this agentId');
        }
        data.tokenExpiresAt = next.expiresAtMs === null ? null : new Date(next.expiresAtMs).toISOString();
        data.roles = next.roles;
        timers.reschedule(next.expiresAtMs);
        logger.info({ tokenExpiresAt: data.tokenExpiresAt }, 'token refreshed');
        return { ok: true, tokenExpiresAt: data.tokenExpiresAt };
      }),
    );
    socket.on('disconnect', (reason) => {
      timers.clear();
      metrics.connections.dec({ namespace: nsp.name });
      logger.info({ reason }, 'client disconnected');
      ctx.store.presence
        .removeClient(agentId, entry)
        .catch((err) => logger.error({ err }, 'could not remove client from presence'));
    });

    const rooms = [Rooms.client(agentId, clientId), Rooms.clients(agentId), Rooms.subject(sub)];
    if (clientId === ADMIN_CLIENT_ID) rooms.push(Rooms.admins(agentId));
    socket.join(rooms);
    timers.reschedule(data.tokenExpiresAt === null ? null : Date.parse(data.tokenExpiresAt));

    const emitSession = (agentOnline: boolean) => {
      const session: SessionInfo = { clientId, agentId, agentOnline, tokenExpiresAt: data.tokenExpiresAt };
      socket.emit(Events.session, session);
    };
    Promise.all([ctx.store.presence.addClient(agentId, entry), ctx.store.presence.listRuntimes(agentId)]).then(
      ([, runtimes]) => emitSession(runtimes.length > 0),
      (err) => {
        logger.error({ err }, 'presence unavailable; session reports the agent offline');
        emitSession(false);
      },
    );
  });
}

function closeSession(socket: Socket, code: keyof typeof SessionClosedCodes): void {
  socket.emit(Events.sessionClosed, { code, retryable: SessionClosedCodes[code].retryable });
}
