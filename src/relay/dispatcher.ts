import type { Namespace, Socket } from 'socket.io';
import type { RuntimeEntry } from '../store/store';
import { Events, type AgentInboundMessage } from './protocol';

/** How one delivery attempt to a chosen runtime ended. */
export type DeliveryResult = 'acked' | 'timeout' | 'gone';

/**
 * Hands a client message to one agent runtime and waits for its ack. The cluster implementation
 * forwards to the replica that holds the runtime and gets the ack back point to point.
 */
export interface RuntimeDispatcher {
  deliver(target: RuntimeEntry, message: AgentInboundMessage, timeoutMs: number): Promise<DeliveryResult>;
  close(): Promise<void>;
}

/** Delivers to runtimes connected to this replica. */
export class LocalDispatcher implements RuntimeDispatcher {
  constructor(private readonly agents: Namespace) {}

  deliver(target: RuntimeEntry, message: AgentInboundMessage, timeoutMs: number): Promise<DeliveryResult> {
    const socket = this.agents.sockets.get(target.socketId);
    if (!socket?.connected) return Promise.resolve('gone');
    return deliverToSocket(socket, message, timeoutMs);
  }

  async close(): Promise<void> {}
}

/** Settle functions of the deliveries awaiting each runtime's ack. */
const inFlight = new WeakMap<Socket, Set<(result: DeliveryResult) => void>>();

/**
 * The deliveries pending on `socket`, with one `disconnect` listener for all of them: a listener
 * per delivery would pile up on a busy runtime (Node's max-listeners warning at 11 in flight, and
 * an O(n) removal per ack).
 */
function pendingOn(socket: Socket): Set<(result: DeliveryResult) => void> {
  let pending = inFlight.get(socket);
  if (!pending) {
    const created = new Set<(result: DeliveryResult) => void>();
    socket.once('disconnect', () => {
      for (const settle of [...created]) settle('gone');
    });
    inFlight.set(socket, created);
    pending = created;
  }
  return pending;
}

/**
 * Emits with an ack and settles on the ack, the timeout, or the socket leaving (so a runtime that
 * disconnects mid-delivery is replaced at once instead of after the full timeout).
 */
export function deliverToSocket(socket: Socket, message: AgentInboundMessage, timeoutMs: number): Promise<DeliveryResult> {
  if (!socket.connected) return Promise.resolve('gone');
  return new Promise((resolve) => {
    const pending = pendingOn(socket);
    const timer = setTimeout(() => settle('timeout'), timeoutMs);
    function settle(result: DeliveryResult) {
      if (!pending.delete(settle)) return;
      clearTimeout(timer);
      resolve(result);
    }
    pending.add(settle);
    socket.emit(Events.message, message, () => settle('acked'));
  });
}
