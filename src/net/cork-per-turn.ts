import type { Writable } from 'node:stream';

/**
 * Gathers what is written to `socket` within one turn of the event loop into one write to the
 * kernel. The socket is corked at its first write of a turn and uncorked in that turn's check
 * phase (`setImmediate`), after the poll phase has run every callback that was ready: the writes
 * go out together, in order, microseconds later. A write syscall costs more than building what it
 * carries, above all on virtual machines, and the writes a relayed message causes on one connection
 * (a replica's to Redis, a websocket: see websocket-engine.ts) come from separate I/O callbacks,
 * which nothing else batches.
 *
 * `atTurnEnd`, when given, runs just before the uncork with the bytes that were still queued on the
 * socket when the turn's first write came: what earlier turns left unsent because the peer is not
 * reading. Bytes written in the turn itself do not count yet, so a burst the peer reads at once is
 * not mistaken for a peer that stopped reading.
 */
export function corkPerTurn(socket: Writable, atTurnEnd?: (backlog: number) => void): void {
  let corked = false;
  let backlog = 0;
  const uncork = () => {
    corked = false;
    atTurnEnd?.(backlog);
    socket.uncork();
  };
  const write = socket.write.bind(socket) as (...args: unknown[]) => boolean;
  socket.write = (...args: unknown[]) => {
    if (!corked) {
      corked = true;
      backlog = socket.writableLength;
      socket.cork();
      setImmediate(uncork);
    }
    return write(...args);
  };
}
