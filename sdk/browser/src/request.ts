import type { Socket } from 'socket.io-client';
import type { ClientToHubEvents, HubToClientEvents } from '../../../src/protocol';
import { closedError, errorFromAck, RelayChatError } from './codes';

type ClientSocket = Socket<HubToClientEvents, ClientToHubEvents>;
type Ack<E extends keyof ClientToHubEvents> = Parameters<Parameters<ClientToHubEvents[E]>[1]>[0];

/**
 * Sends one request that the hub acknowledges (`history`, `stop`, `feedback`) and resolves with the
 * `ok` ack. The ack is awaited at most `timeoutMs`; a connection lost before it (Socket.IO fails
 * pending acks on disconnect) is `NOT_CONNECTED`, a chat closed meanwhile `CLOSED`, an error ack
 * its code.
 * @internal Left out of the published types, which then need no socket.io-client types.
 */
export function request<E extends keyof ClientToHubEvents>(
  socket: ClientSocket | undefined,
  live: boolean,
  event: E,
  payload: Parameters<ClientToHubEvents[E]>[0],
  timeoutMs: number,
  closed: () => boolean,
): Promise<Extract<Ack<E>, { ok: true }>> {
  if (closed()) return Promise.reject(closedError());
  if (!socket?.connected || !live) return Promise.reject(notConnected());
  return new Promise((resolve, reject) => {
    (socket.timeout(timeoutMs).emit as (e: string, p: unknown, cb: (err: Error | null, ack?: Ack<E>) => void) => void)(
      event,
      payload,
      (err, ack) => {
        if (closed()) reject(closedError());
        else if (err) reject(socket.connected ? new RelayChatError('TIMEOUT', 'no answer in time', true) : notConnected());
        else if (!ack?.ok) reject(errorFromAck((ack as { error?: { code?: string } } | undefined)?.error, `${event} refused`));
        else resolve(ack as Extract<Ack<E>, { ok: true }>);
      },
    );
  });
}

/** The rejection of a request without a live connection (before it, or lost while waiting). */
export function notConnected(): RelayChatError {
  return new RelayChatError('NOT_CONNECTED', 'not connected', true);
}
