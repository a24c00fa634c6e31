import type { Socket } from 'socket.io';
import { Events, SessionClosedCodes } from '../protocol';
import type { RelayContext, RelayNamespaces } from './relay.context';
import { Rooms } from './rooms';

/**
 * Ends sessions on every replica: of a deactivated user, of runtimes whose managed API key was
 * revoked, and (on this replica) every client session after a gap in its Redis subscription.
 * REST (users, API keys) and the relay share it through {@link RelayService.sessions}.
 */
export class SessionEndings {
  constructor(
    private readonly ctx: RelayContext,
    private readonly nsp: RelayNamespaces,
  ) {}

  /** Refuses new handshakes of `sub` and ends its sessions on every replica. */
  async deactivateUser(sub: string): Promise<void> {
    await this.ctx.store.deactivations.deactivate(sub);
    const room = this.nsp.client.to(Rooms.subject(sub));
    room.emit(Events.sessionClosed, { code: 'USER_DEACTIVATED', retryable: SessionClosedCodes.USER_DEACTIVATED.retryable });
    this.nsp.client.in(Rooms.subject(sub)).disconnectSockets();
  }

  /**
   * Ends every client session of this replica, `session:closed` SERVER_UNAVAILABLE (retryable):
   * its Redis subscription had a gap, so replies and broadcasts published then passed it by. Each
   * client reconnects with the last id it saw and gets them replayed from the log; kept open, it
   * would take later messages live and move its resume point past the missed ones for good.
   */
  endSessionsAfterSubscriptionGap(): void {
    const local = this.nsp.client.local;
    this.ctx.logger.warn(
      { sessions: this.nsp.client.sockets.size },
      'Redis subscription had a gap; ending client sessions so they get what they missed replayed',
    );
    const sockets = [...this.nsp.client.sockets.values()];
    local.emit(Events.sessionClosed, { code: 'SERVER_UNAVAILABLE', retryable: SessionClosedCodes.SERVER_UNAVAILABLE.retryable });
    // Their transports close, after this turn's writes, and nothing else is sent: a default Socket.IO
    // client reconnects by itself after "transport close", never after "io server disconnect" (as
    // a drain does). `disconnectSockets(true)` would not do: it sends each socket a disconnect
    // packet before it closes the transport, and the client reads that as "io server disconnect".
    setImmediate(() => {
      for (const socket of sockets) socket.conn.close();
    });
  }

  /**
   * Ends, on every replica, the runtimes that connected with the managed API key `keyId` (just
   * deleted): `session:closed` API_KEY_REVOKED, then disconnect. The room reaches every replica
   * through the adapter, as a deactivation does.
   */
  revokeApiKey(keyId: string): void {
    const room = Rooms.apiKey(keyId);
    this.nsp.agent
      .to(room)
      .emit(Events.sessionClosed, { code: 'API_KEY_REVOKED', retryable: SessionClosedCodes.API_KEY_REVOKED.retryable });
    this.nsp.agent.in(room).disconnectSockets();
  }

  /** Ends one runtime whose managed key is gone, as {@link revokeApiKey} ends those it reaches. */
  endRevokedRuntime(socket: Socket): void {
    socket.emit(Events.sessionClosed, { code: 'API_KEY_REVOKED', retryable: SessionClosedCodes.API_KEY_REVOKED.retryable });
    socket.disconnect(true);
  }

  async activateUser(sub: string): Promise<void> {
    await this.ctx.store.deactivations.activate(sub);
  }
}
