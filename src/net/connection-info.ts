import { ServerResponse, type IncomingMessage } from 'node:http';
import type { Server, Socket } from 'socket.io';
import { releaseUpgradeListeners, upgradeResponseCloseListener } from '../internals/engine-io.internals';
import type { ClientIpResolver } from './client-ip';

/**
 * What the relay needs from the HTTP request that opened an engine.io connection: the client
 * address under TRUST_PROXY (per-IP limits, failure counting, logs) and the Origin header
 * (undefined for non-browser peers).
 */
export interface ConnectionInfo {
  readonly ip: string;
  readonly origin: string | undefined;
}

/** The engine.io connection as far as this module touches it. */
export interface EngineConnection {
  request: IncomingMessage | null;
  readonly transport: { readonly name: string };
}

/** The stand-in response engine.io gives middlewares on a websocket upgrade. */
interface UpgradeResponse {
  req: IncomingMessage | null;
}

/**
 * The {@link ConnectionInfo} of every engine.io connection of one Socket.IO server. One per hub:
 * two hubs in one process keep their own.
 */
export class ConnectionInfoRegistry {
  private readonly infos = new WeakMap<object, ConnectionInfo>();

  /**
   * Takes the {@link ConnectionInfo} of every new engine.io connection of `io`, then lets go of
   * the HTTP requests the connection would otherwise keep for its whole life (headers, raw
   * headers, parsed query, stream state: about 2.5 KB per idle client):
   * - the connection's `request` (Socket.IO's documented memory tip). Afterwards `socket.request`
   *   is null and `socket.handshake.headers` empty: read {@link ConnectionInfoRegistry.of} instead;
   * - the stand-in response of a websocket upgrade and its `req`, which engine.io 6.6 keeps
   *   reachable from a `close` listener on the TCP socket. Middlewares set response headers
   *   through it; once engine.io emits `headers` (the 101 response is being written) nothing
   *   reads it again, and the listener is taken off;
   * - the other listeners the upgrade leaves on a websocket connection (see
   *   `releaseUpgradeListeners`).
   *
   * Its middleware must be the server's first (it finds the response's `close` listener as the
   * socket's last), and its `connection` listener is registered here, so listeners registered
   * after this call can use {@link ConnectionInfoRegistry.ofConnection}.
   */
  install(io: Server, clientIp: ClientIpResolver): void {
    const upgrades = new WeakMap<IncomingMessage, { res: UpgradeResponse; onClose: ReturnType<typeof upgradeResponseCloseListener> }>();
    io.engine.use((req: IncomingMessage, res: ServerResponse | UpgradeResponse, next: () => void) => {
      if (!(res instanceof ServerResponse)) upgrades.set(req, { res, onClose: upgradeResponseCloseListener(res) });
      next();
    });
    io.engine.on('headers', (_headers: unknown, req: IncomingMessage) => {
      const upgrade = upgrades.get(req);
      if (!upgrade) return;
      upgrades.delete(req);
      upgrade.res.req = null;
      upgrade.onClose?.socket.removeListener('close', upgrade.onClose.listener);
    });
    io.engine.on('connection', (conn: EngineConnection) => {
      const request = conn.request!;
      this.infos.set(conn, { ip: clientIp(request), origin: request.headers.origin });
      conn.request = null;
      releaseUpgradeListeners(conn.transport);
    });
  }

  /** The {@link ConnectionInfo} of the connection under `socket`. */
  of(socket: Socket): ConnectionInfo {
    return this.ofConnection(socket.conn);
  }

  /** The {@link ConnectionInfo} of an engine.io connection. */
  ofConnection(conn: object): ConnectionInfo {
    const info = this.infos.get(conn);
    if (!info) throw new Error('engine.io connection without connection info (ConnectionInfoRegistry.install not called first)');
    return info;
  }
}
