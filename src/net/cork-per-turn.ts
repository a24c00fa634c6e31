import type { Writable } from 'node:stream';
import { performance } from 'node:perf_hooks';

/**
 * How long a turn may hold what it wrote before that goes out. A long turn (a burst of events read
 * at once) would otherwise hold its first write until its last event is handled: every socket it
 * writes to then gets all of the burst in one go, and the next process in line (Redis, the other
 * replica, the client) starts only then, where it could have worked on the first part meanwhile.
 * Tests that count one write per turn lengthen it, so that a slow machine cannot split their turns.
 */
export const turnHold = { maxMs: 0.25 };

interface Corkable {
  socket: Writable;
  corked: boolean;
  /** Written in this turn (listed in `turn`). */
  inTurn: boolean;
  backlog: number;
  atTurnEnd?: (backlog: number) => void;
}

/** The sockets written in this turn, in the order of their first write. */
const turn: Corkable[] = [];
/** When the oldest write still held was made; -1: nothing held. */
let holdingSince = -1;

/** Writes out what the turn holds so far (a long turn); the sockets cork again at their next write. */
function release(): void {
  holdingSince = -1;
  for (const c of turn) {
    if (!c.corked) continue;
    c.corked = false;
    c.socket.uncork();
  }
}

function endTurn(): void {
  holdingSince = -1;
  for (const c of turn.splice(0)) {
    c.inTurn = false;
    c.atTurnEnd?.(c.backlog);
    if (!c.corked) continue;
    c.corked = false;
    c.socket.uncork();
  }
}

/**
 * Gathers what is written to `socket` within one turn of the event loop into one write to the
 * kernel. The socket is corked at its first write of a turn and uncorked in that turn's check
 * phase (`setImmediate`), after the poll phase has run every callback that was ready: the writes
 * go out together, in order, microseconds later. A write syscall costs more than building what it
 * carries, above all on virtual machines, and the writes a relayed message causes on one connection
 * (a replica's to Redis, a websocket: see websocket-engine.ts) come from separate I/O callbacks,
 * which nothing else batches. In a turn that runs long, what every socket holds goes out once the
 * oldest of it has waited {@link turnHold} (docs/adr/0002-one-write-per-turn.md).
 *
 * `atTurnEnd`, when given, runs at the end of each turn the socket was written in (just before the
 * uncork) with the bytes that were still queued on the socket when the turn's first write came:
 * what earlier turns left unsent because the peer is not reading. Bytes written in the turn itself
 * do not count yet, so a burst the peer reads at once is not mistaken for a peer that stopped
 * reading.
 */
export function corkPerTurn(socket: Writable, atTurnEnd?: (backlog: number) => void): void {
  const c: Corkable = { socket, corked: false, inTurn: false, backlog: 0, atTurnEnd };
  const write = socket.write.bind(socket) as (...args: unknown[]) => boolean;
  socket.write = (...args: unknown[]) => {
    if (!c.inTurn) {
      c.inTurn = true;
      c.backlog = socket.writableLength;
      if (turn.push(c) === 1) setImmediate(endTurn);
    }
    if (!c.corked) {
      c.corked = true;
      socket.cork();
      if (holdingSince < 0) holdingSince = performance.now();
    }
    const ok = write(...args);
    if (performance.now() - holdingSince >= turnHold.maxMs) release();
    return ok;
  };
}
