import type { Namespace, Socket } from 'socket.io';
import { TokenBucket } from '../../limits/token-bucket';
import { errorAck, Events, HISTORY_DEFAULT_LIMIT, type ConversationControl, type OperatorSession, type WatchAck } from '../../protocol';
import { isOperatorApprovalRequest, isWatchRequest } from '../../protocol/handoff.schema';
import type { ControlRecord } from '../../store/control-store';
import { guardEvent } from '../event-guard';
import { releaseHandshake, socketEnded } from '../handshake';
import type { OperatorSocketData, RelayContext } from '../relay.context';
import type { RelayService } from '../relay.service';
import { Rooms } from '../rooms';
import type { StreamService } from '../streams/stream.service';
import type { UserActions } from '../streams/user-actions';

/**
 * Operator consoles (docs/handoff.md): each socket joins its bot's consoles (changes of control,
 * messages of conversations handed off, debug traces) and follows at most one conversation at a
 * time (`conversation:watch`), and may decide users' approval requests (`approval`). Taking over,
 * writing and handing back go through REST.
 */
export function registerOperatorHandlers(
  ctx: RelayContext,
  nsp: Namespace,
  relay: RelayService,
  streams: StreamService,
  actions: Pick<UserActions, 'operatorApproval'>,
): void {
  const { config, metrics } = ctx;
  nsp.on('connection', (socket: Socket) => {
    const data = socket.data as OperatorSocketData;
    const logger = ctx.logger.child({ namespace: nsp.name, agentId: data.agentId, operator: data.sub, socketId: socket.id });
    releaseHandshake(socket);
    metrics.connections.inc({ namespace: nsp.name });
    const guard = {
      socket,
      bucket: new TokenBucket(config.MESSAGE_RATE_PER_S, config.MESSAGE_RATE_BURST),
      maxStrikes: config.MESSAGE_RATE_BURST,
      metrics,
      failures: ctx.handlerFailures,
      logger,
      onAbuse: () => socket.disconnect(),
    };
    socket.on(
      Events.conversationWatch,
      guardEvent({ ...guard, event: Events.conversationWatch, validate: isWatchRequest }, async ({ clientId }): Promise<WatchAck> => {
        const { agentId } = data;
        await relay.feed.watch(socket, agentId, data.watching, clientId);
        data.watching = clientId;
        try {
          const [record, page, open] = await Promise.all([
            relay.control.read(agentId, clientId),
            relay.messageLog.page(agentId, clientId, undefined, HISTORY_DEFAULT_LIMIT, 'socket'),
            streams.snapshot(agentId, clientId),
          ]);
          return { ok: true, control: controlEvent(record), messages: page.messages, streams: open };
        } catch (err) {
          logger.warn({ err }, 'conversation:watch could not read the conversation');
          return errorAck('SERVER_UNAVAILABLE');
        }
      }),
    );
    socket.on(
      Events.approval,
      guardEvent({ ...guard, event: Events.approval, validate: isOperatorApprovalRequest }, (request) =>
        actions.operatorApproval(data.agentId, data.name, request),
      ),
    );
    socket.on('disconnect', (reason) => {
      metrics.connections.dec({ namespace: nsp.name });
      logger.info({ reason }, 'operator console disconnected');
      socketEnded(ctx, socket, nsp.name, logger);
    });
    void socket.join(Rooms.operators(data.agentId));
    const session: OperatorSession = { agentId: data.agentId, name: data.name, admin: data.admin };
    socket.emit(Events.operatorSession, session);
  });
}

/** A control record as consoles and runtimes receive it. */
export function controlEvent(record: ControlRecord): ConversationControl {
  const change: ConversationControl = {
    agentId: record.agentId,
    clientId: record.clientId,
    control: record.state,
    since: record.since ?? new Date(0).toISOString(),
  };
  if (record.operator) change.operator = { name: record.operator.name };
  if (record.reason !== undefined) change.reason = record.reason;
  if (record.summary !== undefined) change.summary = record.summary;
  return change;
}
