import type { Namespace, Socket } from 'socket.io';
import { guardEvent } from '../event-guard';
import { jsonValueError } from '../payload-limits';
import { Events } from '../protocol';
import { isAgentDebug, isAgentReply } from '../protocol.schemas';
import { errorAck, type RelayService } from '../relay.service';
import type { AgentSocketData, RelayContext } from '../relay.context';
import { Rooms } from '../rooms';
import { TokenBucket } from '../token-bucket';

/** Handles accepted agent runtimes: presence, `reply`, `debug`. */
export function registerAgentHandlers(ctx: RelayContext, nsp: Namespace, relay: RelayService): void {
  const { config, metrics } = ctx;
  nsp.on('connection', (socket: Socket) => {
    const { agentId } = socket.data as AgentSocketData;
    const entry = { socketId: socket.id, replicaId: ctx.replicaId };
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
      ctx.store.presence.removeRuntime(agentId, entry).then(
        (left) => left === 0 && relay.agentStatus(agentId, false),
        (err) => logger.error({ err }, 'could not remove runtime from presence'),
      );
    });

    socket.join(Rooms.runtimes(agentId));
    ctx.store.presence.addRuntime(agentId, entry).then(
      (count) => count === 1 && relay.agentStatus(agentId, true),
      (err) => logger.error({ err }, 'could not add runtime to presence'),
    );
  });
}
