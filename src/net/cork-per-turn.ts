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

/** What runs at the end of a corked turn of one socket (see {@link corkPerTurn}). */
export interface TurnEnd {
  atTurnEnd(backlog: number): void;
}

/** A corked socket's state, on the socket itself: no closure per socket (docs/benchmarks.md, idle memory). */
const kTurn = Symbol('corkPerTurn');

interface Turn {
  corked: boolean;
  /** Written in this turn (listed in `turn`). */
  inTurn: boolean;
  backlog: number;
  /** The socket's own `write`, called with the socket as `this`. */
  readonly write: (...args: unknown[]) => boolean;
  readonly end: TurnEnd | undefined;
}

type CorkedSocket = Writable & { [kTurn]: Turn };

/** The sockets written in this turn, in the order of their first write. */
const turn: CorkedSocket[] = [];
/** When the oldest write still held was made; -1: nothing held. */
let holdingSince = -1;

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
 * `end.atTurnEnd`, when given, runs at the end of each turn the socket was written in (just before
 * the uncork) with the bytes that were still queued on the socket when the turn's first write came:
 * what earlier turns left unsent because the peer is not reading. Bytes written in the turn itself
 * do not count yet, so a burst the peer reads at once is not mistaken for a peer that stopped
 * reading.
 *
 * Every idle client holds one of these, so the state is one small object on the socket and the
 * functions are shared: no closure, bound function or scope per socket.
 */
export function corkPerTurn(socket: Writable, end?: TurnEnd): void {
  // Unbound on purpose: corkedWrite calls it with the socket as `this`.
  // eslint-disable-next-line @typescript-eslint/unbound-method
  const state: Turn = { corked: false, inTurn: false, backlog: 0, write: socket.write as Turn['write'], end };
  (socket as CorkedSocket)[kTurn] = state;
  socket.write = corkedWrite as Writable['write'];
}

function corkedWrite(this: CorkedSocket, ...args: unknown[]): boolean {
  const state = this[kTurn];
  if (!state.inTurn) {
    state.inTurn = true;
    state.backlog = this.writableLength;
    if (turn.push(this) === 1) setImmediate(endTurn);
  }
  if (!state.corked) {
    state.corked = true;
    this.cork();
    if (holdingSince < 0) holdingSince = performance.now();
  }
  const ok = state.write.apply(this, args);
  if (performance.now() - holdingSince >= turnHold.maxMs) release();
  return ok;
}

/** Writes out what the turn holds so far (a long turn); the sockets cork again at their next write. */
function release(): void {
  holdingSince = -1;
  for (const socket of turn) {
    const state = socket[kTurn];
    if (!state.corked) continue;
    state.corked = false;
    socket.uncork();
  }
}

function endTurn(): void {
  holdingSince = -1;
  for (const socket of turn.splice(0)) {
    const state = socket[kTurn];
    state.inTurn = false;
    state.end?.atTurnEnd(state.backlog);
    if (!state.corked) continue;
    state.corked = false;
    socket.uncork();
  }
}
