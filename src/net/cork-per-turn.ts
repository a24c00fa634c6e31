import type { Writable } from 'node:stream';

/** What runs at the end of a corked turn of one socket (see {@link corkPerTurn}). */
export interface TurnEnd {
  atTurnEnd(backlog: number): void;
}

/** A corked socket's state, on the socket itself: no closure per socket (docs/benchmarks.md, idle memory). */
const kTurn = Symbol('corkPerTurn');

interface Turn {
  corked: boolean;
  backlog: number;
  /** The socket's own `write`, called with the socket as `this`. */
  readonly write: (...args: unknown[]) => boolean;
  readonly end: TurnEnd | undefined;
}

type CorkedSocket = Writable & { [kTurn]: Turn };

/**
 * Gathers what is written to `socket` within one turn of the event loop into one write to the
 * kernel. The socket is corked at its first write of a turn and uncorked in that turn's check
 * phase (`setImmediate`), after the poll phase has run every callback that was ready: the writes
 * go out together, in order, microseconds later. A write syscall costs more than building what it
 * carries, above all on virtual machines, and the writes a relayed message causes on one connection
 * (a replica's to Redis, a websocket: see websocket-engine.ts) come from separate I/O callbacks,
 * which nothing else batches.
 *
 * `end.atTurnEnd`, when given, runs just before the uncork with the bytes that were still queued on
 * the socket when the turn's first write came: what earlier turns left unsent because the peer is
 * not reading. Bytes written in the turn itself do not count yet, so a burst the peer reads at once
 * is not mistaken for a peer that stopped reading.
 *
 * Every idle client holds one of these, so the state is one small object on the socket and the
 * functions are shared: no closure, bound function or scope per socket.
 */
export function corkPerTurn(socket: Writable, end?: TurnEnd): void {
  // Unbound on purpose: corkedWrite calls it with the socket as `this`.
  // eslint-disable-next-line @typescript-eslint/unbound-method
  const turn: Turn = { corked: false, backlog: 0, write: socket.write as Turn['write'], end };
  (socket as CorkedSocket)[kTurn] = turn;
  socket.write = corkedWrite as Writable['write'];
}

function corkedWrite(this: CorkedSocket, ...args: unknown[]): boolean {
  const turn = this[kTurn];
  if (!turn.corked) {
    turn.corked = true;
    turn.backlog = this.writableLength;
    this.cork();
    setImmediate(uncorkTurn, this);
  }
  return turn.write.apply(this, args);
}

function uncorkTurn(socket: CorkedSocket): void {
  const turn = socket[kTurn];
  turn.corked = false;
  turn.end?.atTurnEnd(turn.backlog);
  socket.uncork();
}
