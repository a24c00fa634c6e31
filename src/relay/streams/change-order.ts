/**
 * The order of one open stream's changes on the replica that owns it (docs/parts.md, "Streams"). A
 * runtime may send changes without waiting for their acks, so each one is checked against the parts
 * that the changes before it make, not against the parts shared state had answered for so far.
 *
 * A change that keeps the parts' shape (a delta to a part that exists) starts at once: its append is
 * pipelined behind the ones before it, as text deltas always were. A change that reshapes them (a new
 * part, an update, a delta that opens a text part) first waits until every change before it was
 * answered, and the changes after it wait for it. Either way a change costs one round trip.
 */
export class ChangeOrder {
  /** A reshaping change runs: the ones after it wait. */
  private blocked = false;
  private readonly waiting: Array<() => void> = [];
  /** Changes started and not yet answered. */
  private readonly running = new Set<Promise<unknown>>();

  /**
   * Runs a change in its turn: at once unless a reshaping change runs or changes wait for one. `run`
   * checks the change against the parts as they are when it starts; a reshaping change calls
   * {@link reshaping} before its first await.
   */
  turn<T>(run: () => Promise<T>): Promise<T> {
    if (!this.blocked && this.waiting.length === 0) return this.track(run());
    return new Promise<T>((resolve, reject) => this.waiting.push(() => void this.track(run()).then(resolve, reject)));
  }

  /** Runs a reshaping change (within its turn): after every change before it was answered, with those after it held back until it is. */
  async reshaping<T>(run: () => Promise<T>): Promise<T> {
    this.blocked = true;
    try {
      if (this.running.size > 0) await Promise.allSettled([...this.running]);
      return await run();
    } finally {
      this.release();
    }
  }

  /** Resolves once every change that came before the call was answered (a stream's end waits for them). */
  settled(): Promise<unknown> {
    return this.turn(() => Promise.allSettled([...this.running]));
  }

  private track<T>(change: Promise<T>): Promise<T> {
    this.running.add(change);
    const done = () => this.running.delete(change);
    change.then(done, done);
    return change;
  }

  /** The reshaping change was answered: the waiting changes start, in order, until one reshapes again. */
  private release(): void {
    this.blocked = false;
    while (!this.blocked && this.waiting.length > 0) this.waiting.shift()!();
  }
}
