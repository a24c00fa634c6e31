/** Node clamps timeouts above 2^31-1 ms to 1 ms; longer waits are taken in steps. */
const MAX_TIMEOUT_MS = 2 ** 31 - 1;

/** Something to run at `dueMs`; the queue keeps its position in `slot` (-1 when not queued). */
export interface Deadline {
  dueMs: number;
  slot: number;
  fire(): void;
}

/**
 * Runs deadlines at their due time (Date.now() clock) with one Node timer for all of them: a binary
 * heap ordered by due time, with removal by position. A Node Timeout and its closure cost about
 * 250 bytes; an entry here costs a heap slot, so every idle socket can have its own deadline.
 * Deadlines due at the same millisecond fire in no particular order.
 */
export class DeadlineQueue {
  private readonly heap: Deadline[] = [];
  private timer?: NodeJS.Timeout;
  private timerDueMs = Infinity;

  get size(): number {
    return this.heap.length;
  }

  /** Queues `deadline` at `dueMs`, moving it if it is already queued. */
  add(deadline: Deadline, dueMs: number): void {
    if (deadline.slot >= 0) this.remove(deadline);
    deadline.dueMs = dueMs;
    deadline.slot = this.heap.length;
    this.heap.push(deadline);
    this.up(deadline.slot);
    this.arm();
  }

  /** Takes `deadline` out of the queue; nothing happens if it is not queued. */
  remove(deadline: Deadline): void {
    const i = deadline.slot;
    if (i < 0) return;
    deadline.slot = -1;
    const last = this.heap.pop()!;
    if (last !== deadline) {
      this.heap[i] = last;
      last.slot = i;
      this.down(i);
      this.up(last.slot);
    }
    if (this.heap.length === 0) this.disarm();
  }

  private run(): void {
    this.timer = undefined;
    this.timerDueMs = Infinity;
    const now = Date.now();
    try {
      for (let next = this.heap[0]; next && next.dueMs <= now; next = this.heap[0]) {
        this.remove(next);
        next.fire();
      }
    } finally {
      this.arm();
    }
  }

  /** Points the timer at the earliest deadline. */
  private arm(): void {
    const first = this.heap[0];
    if (!first) return this.disarm();
    if (this.timer && this.timerDueMs <= first.dueMs) return;
    this.disarm();
    const delay = Math.max(0, first.dueMs - Date.now());
    this.timerDueMs = delay > MAX_TIMEOUT_MS ? Date.now() + MAX_TIMEOUT_MS : first.dueMs;
    this.timer = setTimeout(() => this.run(), Math.min(delay, MAX_TIMEOUT_MS));
  }

  private disarm(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.timerDueMs = Infinity;
  }

  private up(i: number): void {
    const heap = this.heap;
    const item = heap[i];
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (item.dueMs >= heap[parent].dueMs) break;
      heap[i] = heap[parent]!;
      heap[i].slot = i;
      i = parent;
    }
    heap[i] = item;
    item.slot = i;
  }

  private down(i: number): void {
    const heap = this.heap;
    const item = heap[i];
    const n = heap.length;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= n) break;
      const right = left + 1;
      const child = right < n && heap[right].dueMs < heap[left].dueMs ? right : left;
      if (heap[child].dueMs >= item.dueMs) break;
      heap[i] = heap[child]!;
      heap[i].slot = i;
      i = child;
    }
    heap[i] = item;
    item.slot = i;
  }
}
