import type { Namespace, Server } from 'socket.io';

/**
 * Socket.IO lists its namespaces only in `Server#_nsps` (public in the typings, private by name and
 * documentation). The hub reads it to restore every adapter's subscriptions after a Redis outage;
 * this module is the only place that names it, checked by
 * test/integration/internals/socket-io.internals.test.ts.
 */
export const SOCKET_IO_CHECKED = { package: 'socket.io', versions: ['4.8.4'] } as const;

/** Every namespace `io` has created, the main one (`/`) included. */
export function namespacesOf(io: Server): Namespace[] {
  const nsps = (io as unknown as { _nsps?: Map<string, Namespace> })._nsps;
  if (!(nsps instanceof Map)) {
    throw new Error('socket.io no longer keeps its namespaces in Server#_nsps (see src/internals/socket-io.internals.ts)');
  }
  return [...nsps.values()];
}
