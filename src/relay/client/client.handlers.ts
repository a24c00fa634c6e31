import type { Namespace, Socket } from 'socket.io';
import { anyPayload, runGuarded } from '../event-guard';
import { errorAck, Events } from '../../protocol';
import {
  isApprovalRequest,
  isAuthRefresh,
  isClientMessage,
  isFeedbackRequest,
  isHistoryRequest,
  isStopRequest,
} from '../../protocol/schemas';
import { OperatorOnlyEvents } from '../../protocol/handoff.schema';
import type { StreamService } from '../streams/stream.service';
import type { UserActions } from '../streams/user-actions';
import { ReplayGates } from './replay-gate';
import type { RelayService } from '../relay.service';
import type { RelayContext } from '../relay.context';
import { releaseHandshake } from '../handshake';
import { ClientSession, type ClientNamespace } from './client-session';

/** Handles accepted browser clients: rooms, `session`, `message`, token expiry and refresh. */
export function registerClientHandlers(
  ctx: RelayContext,
  nsp: Namespace,
  relay: RelayService,
  streams: StreamService,
  actions: UserActions,
): void {
  const { config, metrics } = ctx;
  const shared: ClientNamespace = {
    ctx,
    relay,
    name: nsp.name,
    message: {
      event: Events.message,
      maxStrikes: config.MESSAGE_RATE_BURST,
      validate: isClientMessage,
      metrics,
      failures: ctx.handlerFailures,
    },
    refresh: {
      event: Events.authRefresh,
      maxStrikes: config.MESSAGE_RATE_BURST,
      validate: isAuthRefresh,
      metrics,
      failures: ctx.handlerFailures,
    },
    history: {
      event: Events.history,
      maxStrikes: config.MESSAGE_RATE_BURST,
      validate: isHistoryRequest,
      metrics,
      failures: ctx.handlerFailures,
    },
    stop: { event: Events.stop, maxStrikes: config.MESSAGE_RATE_BURST, validate: isStopRequest, metrics, failures: ctx.handlerFailures },
    feedback: {
      event: Events.feedback,
      maxStrikes: config.MESSAGE_RATE_BURST,
      validate: isFeedbackRequest,
      metrics,
      failures: ctx.handlerFailures,
    },
    approval: {
      event: Events.approval,
      maxStrikes: config.MESSAGE_RATE_BURST,
      validate: isApprovalRequest,
      metrics,
      failures: ctx.handlerFailures,
    },
    operatorOnly: Object.fromEntries(
      OperatorOnlyEvents.map((event) => [
        event,
        { event, maxStrikes: config.MESSAGE_RATE_BURST, validate: anyPayload, metrics, failures: ctx.handlerFailures },
      ]),
    ),
    gates: new ReplayGates(nsp),
    streams,
    actions,
  };
  // One listener per event for every socket of the namespace, finding its session by the socket
  // (Socket.IO calls listeners with the socket as `this`): closures made per connection would cost
  // six functions and their scope on every idle socket.
  const sessions = new WeakMap<Socket, ClientSession>();
  const listeners: Record<string, (this: Socket, ...args: unknown[]) => void> = {
    [Events.message](...args) {
      const session = sessions.get(this)!;
      void runGuarded(shared.message, session, args, (payload) => session.send(payload));
    },
    [Events.authRefresh](...args) {
      const session = sessions.get(this)!;
      void runGuarded(shared.refresh, session, args, (payload) => session.refresh(payload));
    },
    [Events.history](...args) {
      const session = sessions.get(this)!;
      void runGuarded(shared.history, session, args, (payload) => session.history(payload));
    },
    [Events.stop](...args) {
      const session = sessions.get(this)!;
      void runGuarded(shared.stop, session, args, (payload) => actions.stop(session.user, payload));
    },
    [Events.feedback](...args) {
      const session = sessions.get(this)!;
      void runGuarded(shared.feedback, session, args, (payload) => actions.feedback(session.user, payload));
    },
    [Events.approval](...args) {
      const session = sessions.get(this)!;
      void runGuarded(shared.approval, session, args, (payload) => actions.approval(session.user, payload));
    },
    disconnect(reason) {
      sessions.get(this)!.end(reason as string);
    },
  };
  for (const event of OperatorOnlyEvents) {
    listeners[event] = function (...args) {
      void runGuarded(shared.operatorOnly[event], sessions.get(this)!, args, () => errorAck('OPERATOR_REQUIRED'));
    };
  }
  nsp.on('connection', (socket: Socket) => {
    const session = new ClientSession(shared, socket);
    sessions.set(socket, session);
    releaseHandshake(socket);
    metrics.connections.inc({ namespace: nsp.name });
    for (const event in listeners) socket.on(event, listeners[event]);
    session.start();
  });
}
