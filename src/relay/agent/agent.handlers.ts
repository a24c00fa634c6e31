import type { Namespace, Socket } from 'socket.io';
import { TokenBucket } from '../../limits/token-bucket';
import { errorAck, Events } from '../../protocol';
import { jsonValueError } from '../../protocol/payload-limits';
import { isAgentDebug, isAgentReply } from '../../protocol/schemas';
import { DeliveryBudgetError } from '../delivery-budget';
import { guardEvent } from '../event-guard';
import type { AgentSocketData, RelayContext } from '../relay.context';
import type { RelayService } from '../relay.service';
import { Rooms } from '../rooms';
import type { RuntimePresence } from './runtime-presence';

/** Handles accepted agent runtimes: `reply`, `debug`, leaving presence. */
export function registerAgentHandlers(ctx: RelayContext, nsp: Namespace, relay: RelayService, presence: RuntimePresence): void {
  const { config, metrics } = ctx;
  nsp.on('connection', (socket: Socket) => {
    const { agentId, apiKeyId } = socket.data as AgentSocketData;
    const logger = ctx.logger.child({ namespace: nsp.name, agentId, socketId: socket.id });
    const bucket = new TokenBucket(config.AGENT_MESSAGE_RATE_PER_S, config.AGENT_MESSAGE_RATE_BURST);
    const guard = {
      socket,
      bucket,
      maxStrikes: config.AGENT_MESSAGE_RATE_BURST,
      metrics,
      failures: ctx.handlerFailures,
      logger,
      onAbuse: () => {},
    };
    metrics.connections.inc({ namespace: nsp.name });

    socket.on(
      Events.reply,
      guardEvent({ ...guard, event: Events.reply, validate: isAgentReply }, async (reply) => {
        const tooLarge = relay.replyError(reply);
        if (tooLarge) return tooLarge;
        // A reply that could not be logged is not sent and rejects: the guard acks SERVER_UNAVAILABLE.
        try {
          return { ok: true, ...(await relay.publish(agentId, reply)) };
        } catch (err) {
          if (err instanceof DeliveryBudgetError) return errorAck('RATE_LIMITED', err.message);
          throw err;
        }
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
      presence.leave(socket);
    });

    void socket.join(apiKeyId === undefined ? Rooms.runtimes(agentId) : [Rooms.runtimes(agentId), Rooms.apiKey(apiKeyId)]);
  });
}
