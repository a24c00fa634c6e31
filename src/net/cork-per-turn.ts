import type { Writable } from 'node:stream';

/**
 * Gathers what is written to `socket` within one turn of the event loop into one write to the
 * kernel. The socket is corked at its first write of a turn and uncorked in that turn's check
 * phase (`setImmediate`), after the poll phase has run every callback that was ready: the writes
 * go out together, in order, microseconds later. A write syscall costs more than building what it
 * carries, above all on virtual machines, and the writes a relayed message causes on one connection
 * (a replica's to Redis, a websocket: see websocket-engine.ts) come from separate I/O callbacks,
 * which nothing else batches.
 */
export function corkPerTurn(socket: Writable): void {
  let corked = false;
  const uncork = () => {
    corked = false;
    socket.uncork();
  };
  const write = socket.write.bind(socket) as (...args: unknown[]) => boolean;
  socket.write = (...args: unknown[]) => {
    if (!corked) {
      corked = true;
      socket.cork();
      setImmediate(uncork);
    }
    return write(...args);
  };
}
