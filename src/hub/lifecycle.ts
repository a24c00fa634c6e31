import type { Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Server } from 'socket.io';
import { engineConnections, type EngineConnection } from '../internals/engine-io.internals';
import type { Logger } from '../logging/logger';
import { Namespaces } from '../protocol';
import type { Hub } from './hub';

/** Work a hub runs in the background between {@link Hub.start} and {@link Hub.close}. */
export interface BackgroundWork {
  start(): void;
  stop(): void;
}

/** What a hub starts and stops around its server: see {@link lifecycleOf}. */
interface LifecycleParts {
  httpServer: HttpServer;
  io: Server;
  logger: Logger;
  background: BackgroundWork[];
  writeFiles(): Promise<void>;
  /** Called first on close and drain: readiness turns false, no new handshake is taken. */
  draining(): void;
  /** Called on close, after {@link draining}, before the background work stops. */
  stopping(): void;
  /** Closed in order once every transport is. */
  closeLast: (() => Promise<void>)[];
}

/** {@link Hub.start}, {@link Hub.listen}, {@link Hub.close} and {@link Hub.drain}, each idempotent where the interface says so. */
export function lifecycleOf(parts: LifecycleParts): Pick<Hub, 'start' | 'listen' | 'close' | 'drain'> {
  const { httpServer, io, logger } = parts;
  let started: Promise<void> | undefined;
  const start = () => {
    started ??= (async () => {
      for (const part of parts.background) part.start();
      await parts.writeFiles();
    })();
    return started;
  };
  const listen = async (port: number, host: string) => {
    await start();
    await new Promise<void>((resolve, reject) => {
      httpServer.once('error', reject);
      httpServer.listen(port, host, () => {
        httpServer.off('error', reject);
        resolve();
      });
    });
    return (httpServer.address() as AddressInfo).port;
  };
  let closed: Promise<void> | undefined;
  const close = () => {
    closed ??= (async () => {
      parts.draining();
      parts.stopping();
      for (const part of [...parts.background].reverse()) part.stop();
      // io.close() ends every transport here (`transport close`, which clients reconnect from); a
      // disconnectSockets() would go through the adapter to every replica.
      await new Promise<void>((resolve) => io.close(() => resolve()));
      for (const closeNext of parts.closeLast) await closeNext();
    })();
    return closed;
  };
  const drain = async (graceMs: number) => {
    parts.draining();
    logger.info({ graceMs }, 'draining: refusing new connections, closing transports in batches');
    await closeTransportsInBatches(io, graceMs);
    await close();
  };
  return { start, listen, close, drain };
}

/**
 * Closes engine connections (not Socket.IO sockets: clients must see `transport close`, which they
 * reconnect from, never `io server disconnect`) in ten batches spread over most of the grace period.
 * Browser clients go first and agent runtimes last, so the bot keeps answering while clients move
 * and deliveries already on their way to a runtime here can still be acknowledged.
 */
async function closeTransportsInBatches(io: Server, graceMs: number): Promise<void> {
  const all = engineConnections(io);
  const agentConns = new Set<EngineConnection>();
  for (const socket of io.of(Namespaces.agent).sockets.values()) agentConns.add(socket.conn);
  const clients = [...all.filter((c) => !agentConns.has(c)), ...all.filter((c) => agentConns.has(c))];
  const batches = 10;
  const perBatch = Math.ceil(clients.length / batches);
  const pause = (graceMs * 0.8) / batches;
  for (let i = 0; i < clients.length; i += perBatch) {
    for (const conn of clients.slice(i, i + perBatch)) conn.close();
    if (i + perBatch < clients.length) await new Promise((resolve) => setTimeout(resolve, pause));
  }
}
