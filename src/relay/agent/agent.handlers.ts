import type { Namespace, Socket } from 'socket.io';
import { guardEvent } from '../event-guard';
import type { HandshakeCheck } from '../handshake';
import { jsonValueError } from '../payload-limits';
import { Events } from '../protocol';
import { isAgentDebug, isAgentReply } from '../protocol.schemas';
import { errorAck, type RelayService } from '../relay.service';
import type { AgentSocketData, RelayContext } from '../relay.context';
import { Rooms } from '../rooms';
import { TokenBucket } from '../token-bucket';

/** Handles accepted agent runtimes: `reply`, `debug`, leaving presence. */
export function registerAgentHandlers(ctx: RelayContext, nsp: Namespace, relay: RelayService): void {
  const { config, metrics } = ctx;
  nsp.on('connection', (socket: Socket) => {
    const { agentId } = socket.data as AgentSocketData;
    const logger = ctx.logger.child({ namespace: nsp.name, agentId, socketId: socket.id });
    const bucket = new TokenBucket(config.AGENT_MESSAGE_RATE_PER_S, config.AGENT_MESSAGE_RATE_BURST);
    const guard = { socket, bucket, maxStrikes: config.AGENT_MESSAGE_RATE_BURST, metrics, logger, onAbuse: () => {} };
    metrics.connections.inc({ namespace: nsp.name });

    socket.on(
      Events.reply,
      guardEvent({ ...guard, event: Events.reply, validate: isAgentReply }, (reply) => {
        const tooLarge = relay.replyError(reply);
        if (tooLarge) return tooLarge;
        return { ok: true, ...relay.publish(agentId, reply) };
      }),
    );
    socket.on(
      Events.debug,
      guardEvent({ ...guard, event: Events.debug, validate: isAgentDebug }, (payload) => {
        const invalid = jsonValueError(payload.trace, config.MAX_MESSAGE_BYTES);
        if (invalid) return errorAck(invalid);
        relay.debug(agentId, payload.trace, payload.clientId);
        return { ok: true };
      }),
    );
    socket.on('disconnect', (reason) => {
      metrics.connections.dec({ namespace: nsp.name });
      logger.info({ reason }, 'agent runtime disconnected');
      leavePresence.get(socket)?.();
    });

    socket.join(Rooms.runtimes(agentId));
  });
}

/** How each runtime that entered presence leaves it (once, on disconnect or on an early close). */
const leavePresence = new WeakMap<Socket, () => void>();

/**
 * The last step of the `/ws/agent` handshake: records the runtime in presence before its CONNECT
 * is sent, so once a runtime sees itself connected, a client on any replica reaches it. A
 * connection that closes before it joins the namespace never enters presence, or leaves it again.
 * When the store is unreachable the runtime is still accepted; the presence keeper registers it
 * once Redis is back.
 */
export function enterPresence(ctx: RelayContext, relay: RelayService): HandshakeCheck {
  return async (socket) => {
    // Closed while an earlier check waited: Socket.IO will drop the socket, and no `close` follows.
    if (socket.conn.readyState !== 'open') return;
    const { agentId } = socket.data as AgentSocketData;
    const entry = { socketId: socket.id, replicaId: ctx.replicaId };
    let present = true;
    const leave = () => {
      if (!present) return;
      present = false;
      socket.conn.off('close', leave);
      ctx.store.presence.removeRuntime(agentId, entry).then(
        (left) => left === 0 && relay.agentStatus(agentId, false),
        (err) => ctx.logger.error({ err, agentId, socketId: socket.id }, 'could not remove runtime from presence'),
      );
    };
    leavePresence.set(socket, leave);
    socket.conn.once('close', leave);
    try {
      if ((await ctx.store.presence.addRuntime(agentId, entry)) === 1) relay.agentStatus(agentId, true);
    } catch (err) {
      ctx.logger.error({ err, agentId, socketId: socket.id }, 'could not add runtime to presence');
    }
  };
}
