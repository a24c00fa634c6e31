import type { Server } from 'socket.io';

/**
 * Engine.IO keeps its open connections by id in `Server#clients`, a protected field of its typings
 * (documented in its README, but not part of the typed API). The hub reads it at shutdown to close
 * transports (not Socket.IO sockets) in batches; this module is the only place that names it, checked
 * by test/integration/internals/engine-io.internals.test.ts.
 */
export const ENGINE_IO_CHECKED = { package: 'engine.io', versions: ['6.6.12'] } as const;

/** An Engine.IO connection, as far as the hub uses one. */
export interface EngineConnection {
  close(): void;
}

/** Every open Engine.IO connection of `io`, whether or not it joined a namespace yet. */
export function engineConnections(io: Server): EngineConnection[] {
  const clients = (io.engine as unknown as { clients?: Record<string, EngineConnection> }).clients;
  if (clients === undefined || typeof clients !== 'object') {
    throw new Error('engine.io no longer keeps its connections in Server#clients (see src/internals/engine-io.internals.ts)');
  }
  return Object.values(clients);
}
