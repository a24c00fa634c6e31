import type { Socket } from 'socket.io';
import { HandshakeError, type HandshakeCheck } from '../handshake';
import type { AgentSocketData, RelayContext } from '../relay.context';
import type { RelayService } from '../relay.service';

/**
 * Owns every runtime's time in presence, from the last step of its handshake to its disconnect.
 * One per hub.
 *
 * A runtime enters presence before its CONNECT is sent, so once it sees itself connected, a client
 * on any replica reaches it. A connection that closes before it joins the namespace never enters
 * presence, or leaves it again. When the store is unreachable the runtime is still accepted; the
 * presence keeper registers it once Redis is back.
 */
export class RuntimePresence {
  /** How each runtime that entered presence leaves it (once, on disconnect or an early close). */
  private readonly leaving = new WeakMap<Socket, () => void>();

  constructor(
    private readonly ctx: RelayContext,
    private readonly relay: RelayService,
  ) {}

  /** The handshake step that enters the runtime into presence. */
  readonly enter: HandshakeCheck = async (socket) => {
    // Closed while an earlier check waited: Socket.IO will drop the socket, and no `close` follows.
    if (socket.conn.readyState !== 'open') return;
    const { ctx, relay } = this;
    const { agentId } = socket.data as AgentSocketData;
    const entry = { socketId: socket.id, replicaId: ctx.replicaId };
    let present = true;
    const leave = () => {
      if (!present) return;
      present = false;
      this.leaving.delete(socket);
      socket.conn.off('close', leave);
      ctx.store.presence.removeRuntime(agentId, entry).then(
        (left) => left === 0 && relay.presenceChanged(agentId, false),
        (err: unknown) => ctx.logger.error({ err, agentId, socketId: socket.id }, 'could not remove runtime from presence'),
      );
    };
    this.leaving.set(socket, leave);
    socket.conn.once('close', leave);
    let count: number;
    try {
      count = await ctx.store.presence.addRuntime(agentId, entry);
    } catch (err) {
      ctx.logger.error({ err, agentId, socketId: socket.id }, 'could not add runtime to presence');
      return;
    }
    // Counted after the add, which is atomic in the store: however many connect at once on any
    // replica, no more than the bound stay (runtimes racing for the last place may all be refused,
    // and retry).
    const max = ctx.config.MAX_RUNTIMES_PER_AGENT;
    if (max > 0 && count > max) {
      leave();
      ctx.metrics.rateLimited.inc({ scope: 'agent_runtimes' });
      throw new HandshakeError('AGENT_RUNTIME_LIMIT');
    }
    try {
      await relay.runtimeEntered(agentId, count);
    } catch (err) {
      ctx.logger.error({ err, agentId, socketId: socket.id }, 'could not announce the runtime');
    }
  };

  /** Takes a disconnected runtime out of presence (no-op if it never entered or already left). */
  leave(socket: Socket): void {
    this.leaving.get(socket)?.();
  }
}
