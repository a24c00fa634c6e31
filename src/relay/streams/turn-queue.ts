/**
 * Hands out event-loop turns one at a time, in the order asked for: `await turns.next()` resumes in a
 * turn of its own (a `setImmediate`), after every earlier caller's. Work that costs milliseconds
 * each and arrives all at once (a runtime leaving with 100 streams of 256 KiB to end) then runs one
 * piece a turn, with timers and sockets served in between, instead of in one turn that stalls the
 * replica for every tenant (docs/streaming.md, "Ending many streams").
 */
export class TurnQueue {
  private readonly waiting: Array<() => void> = [];
  private head = 0;
  private scheduled = false;

  /** Resolves in a turn of its own, after the callers before it. */
  next(): Promise<void> {
    return new Promise((resolve) => {
      this.waiting.push(resolve);
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(this.release);
      }
    });
  }

  private readonly release = (): void => {
    const resolve = this.waiting[this.head++];
    if (this.head === this.waiting.length) {
      this.waiting.length = 0;
      this.head = 0;
      this.scheduled = false;
    } else setImmediate(this.release);
    resolve();
  };
}
