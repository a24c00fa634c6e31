import type { Namespace, Socket } from 'socket.io';
import { TokenBucket } from '../../limits/token-bucket';
import { errorAck, Events } from '../../protocol';
import { jsonValueError } from '../../protocol/payload-limits';
import { isAgentDebug, isAgentReply } from '../../protocol/schemas';
import { DeliveryBudgetError } from '../delivery-budget';
import { QuotaExceededError } from '../../store/bot-quota';
import { ControlConflictError } from '../handoff/conversation-control';
import { isHandoffRequest, OperatorOnlyEvents } from '../../protocol/handoff.schema';
import { anyPayload, guardEvent } from '../event-guard';
import { socketEnded } from '../handshake';
import type { AgentSocketData, RelayContext } from '../relay.context';
import type { RelayService } from '../relay.service';
import { Rooms } from '../rooms';
import type { RuntimePresence } from './runtime-presence';
import { registerStreamHandlers } from '../streams/stream.handlers';
import type { StreamService } from '../streams/stream.service';
import type { UserActions } from '../streams/user-actions';

/** Handles accepted agent runtimes: `reply`, `debug`, streamed replies and activity, leaving presence; hands a new one the undelivered approvals. */
export function registerAgentHandlers(
  ctx: RelayContext,
  nsp: Namespace,
  relay: RelayService,
  presence: RuntimePresence,
  streams: StreamService,
  actions: Pick<UserActions, 'runtimeConnected'>,
): void {
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
    // A bulk reader: the messages of all the bot's users queue for it (MAX_AGENT_SOCKET_BUFFER_BYTES).
    ctx.sendBuffers.markRuntime(socket.conn);

    socket.on(
      Events.reply,
      guardEvent({ ...guard, event: Events.reply, validate: isAgentReply }, async (reply) => {
        const checked = relay.checkContent(reply, 'agent');
        if (!('content' in checked)) return checked;
        // A reply that could not be logged is not sent and rejects: the guard acks SERVER_UNAVAILABLE.
        try {
          return { ok: true, ...(await relay.publish(agentId, { to: reply.to, replyTo: reply.replyTo, ...checked.content })) };
        } catch (err) {
          if (err instanceof DeliveryBudgetError) return errorAck('RATE_LIMITED', err.message);
          if (err instanceof QuotaExceededError) return errorAck('QUOTA_EXCEEDED', err.message);
          if (err instanceof ControlConflictError) return errorAck('CONVERSATION_HELD');
          throw err;
        }
      }),
    );
    for (const event of OperatorOnlyEvents) {
      socket.on(
        event,
        guardEvent({ ...guard, event, validate: anyPayload }, () => errorAck('OPERATOR_REQUIRED')),
      );
    }
    socket.on(
      Events.handoff,
      guardEvent({ ...guard, event: Events.handoff, validate: isHandoffRequest }, async (request) => {
        try {
          await relay.control.askForPerson(agentId, request);
          return { ok: true };
        } catch (err) {
          if (err instanceof ControlConflictError) return errorAck('CONVERSATION_HELD');
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
    registerStreamHandlers(socket, agentId, guard, streams, relay.activity, relay.deliveries, config.STREAM_DELTA_RATE_BURST);
    socket.on('disconnect', (reason) => {
      streams.socketLeft(socket.id);
      metrics.connections.dec({ namespace: nsp.name });
      logger.info({ reason }, 'agent runtime disconnected');
      socketEnded(ctx, socket, nsp.name, logger);
      presence.leave(socket);
    });

    void socket.join(apiKeyId === undefined ? Rooms.runtimes(agentId) : [Rooms.runtimes(agentId), Rooms.apiKey(apiKeyId)]);
    if (apiKeyId !== undefined) void confirmKey(ctx, relay, socket, apiKeyId, logger);
    // Users' decisions that no runtime acked (none was connected) reach the bot now (docs/parts.md).
    actions.runtimeConnected(agentId, socket.id);
  });
}

/**
 * A key deleted between this runtime's credential check and its joining the key's room was
 * revoked while no socket of it was there to hear: deleteApiKey deletes the record first, then
 * broadcasts to the room. Reading the record once more after the join closes that window: a
 * deletion before the read is seen here, one after it reaches the room. A read that fails keeps
 * the runtime (a key cannot be deleted while the store is unreachable either).
 */
async function confirmKey(ctx: RelayContext, relay: RelayService, socket: Socket, apiKeyId: string, logger: RelayContext['logger']) {
  try {
    if ((await ctx.store.apiKeys.get(apiKeyId)) === null && socket.connected) relay.sessions.endRevokedRuntime(socket);
  } catch (err) {
    logger.warn({ err }, 'could not confirm the API key of a new runtime; it stays connected');
  }
}
