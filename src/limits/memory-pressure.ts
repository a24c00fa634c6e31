import { EventEmitter } from 'node:events';
import { totalmem } from 'node:os';
import { getHeapStatistics } from 'node:v8';
import { findCgroupMemory, type CgroupMemory } from './cgroup-memory';

export interface MemoryPressureOptions {
  /** MEMORY_LIMIT_BYTES: 0 = the cgroup's limit, else the machine's memory. */
  limitBytes: number;
  /** MEMORY_HIGH_WATER_RATIO: at or above this share of the limit, new handshakes are refused (0 = never). */
  highWaterRatio: number;
  /** MEMORY_LOW_WATER_RATIO: below this share of the limit, they are taken again. */
  lowWaterRatio: number;
  /** How often usage is read; 1 s by default. */
  intervalMs?: number;
  /** The cgroup to read; found from /proc/self/cgroup by default. */
  cgroup?: CgroupMemory | null;
  /** V8's heap in use and its limit; node:v8's heap statistics by default. */
  heap?: () => { used: number; limit: number };
}

function v8Heap(): { used: number; limit: number } {
  const { used_heap_size: used, heap_size_limit: limit } = getHeapStatistics();
  return { used, limit };
}

/** Where {@link MemoryPressure.limit} comes from. */
export type MemoryLimitSource = 'setting' | 'cgroup' | 'machine';

/**
 * This replica's memory against its limit, with a high-water mark and hysteresis: at or above
 * MEMORY_HIGH_WATER_RATIO of the limit it is "over" (unready, refusing new handshakes with
 * SERVER_BUSY) until usage falls below MEMORY_LOW_WATER_RATIO. The limit is MEMORY_LIMIT_BYTES
 * when set, else the container's (cgroup v2 `memory.max`, v1 `memory.limit_in_bytes`), else the
 * machine's memory. Usage is the cgroup's working set (what the OOM killer cannot reclaim) when
 * the limit is the cgroup's, else this process's RSS. V8's heap has a limit of its own, below the
 * container's (Node sizes it from the cgroup's: about 300 MiB in 512 MiB), past which the process
 * aborts just as surely, so the share that counts is the larger of the two. Emits `change`
 * (over: boolean) on each crossing. Docs: docs/operations.md, "Memory high-water mark".
 */
export class MemoryPressure extends EventEmitter<{ change: [over: boolean] }> {
  readonly limit: number;
  readonly source: MemoryLimitSource;
  private readonly readUsage: () => number;
  private over = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly options: MemoryPressureOptions) {
    super();
    const cgroup = options.cgroup === undefined ? findCgroupMemory() : options.cgroup;
    const rss = () => process.memoryUsage.rss();
    if (options.limitBytes > 0) {
      [this.limit, this.source, this.readUsage] = [options.limitBytes, 'setting', rss];
    } else if (cgroup) {
      [this.limit, this.source, this.readUsage] = [cgroup.limit, 'cgroup', () => cgroup.usage()];
    } else {
      [this.limit, this.source, this.readUsage] = [totalmem(), 'machine', rss];
    }
  }

  /** Bytes in use now, as measured against {@link limit}. */
  usage(): number {
    return this.readUsage();
  }

  /** The larger of usage / limit and V8's heap in use / its limit, now. */
  share(): number {
    const heap = (this.options.heap ?? v8Heap)();
    return Math.max(this.usage() / this.limit, heap.used / heap.limit);
  }

  /** The limit less the usage now (negative past the limit). */
  headroom(): number {
    return this.limit - this.usage();
  }

  /** True from the high-water mark until usage is back below the low one. */
  get overHighWater(): boolean {
    return this.over;
  }

  /** Reads usage and moves between the marks; returns whether this replica is over. */
  check(): boolean {
    const { highWaterRatio, lowWaterRatio } = this.options;
    if (highWaterRatio <= 0) return false;
    const share = this.share();
    const over = this.over ? share >= lowWaterRatio : share >= highWaterRatio;
    if (over !== this.over) {
      this.over = over;
      this.emit('change', over);
    }
    return over;
  }

  start(): void {
    if (this.timer || this.options.highWaterRatio <= 0) return;
    this.check();
    this.timer = setInterval(() => this.check(), this.options.intervalMs ?? 1000).unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }
}
