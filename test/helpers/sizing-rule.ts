// The sizing rule of docs/operations.md ("Sizing"), measured there: memory of one replica in Redis
// mode, for its container (cgroup working set) and for V8's heap, which Node sizes from the
// container's limit. test/ops checks the chart's defaults against it; test/containers/sizing.spec.ts
// holds the image to it.

const KiB = 2 ** 10;
const MiB = 2 ** 20;

export const SIZING_RULE = {
  container: { baseBytes: 64 * MiB, perConnectionBytes: 24 * KiB, perMessageBytes: (size: number) => 64 * KiB + 16 * size },
  heap: { baseBytes: 27 * MiB, perConnectionBytes: 16 * KiB, perMessageBytes: (size: number) => 48 * KiB + 6 * size },
  /** Maximum-size messages in flight at once the chart's defaults budget for. */
  messagesInFlight: 150,
} as const;

/**
 * The Redis side of docs/operations.md ("Storage quotas per bot"): each bot may store
 * BOT_STORAGE_MAX_BYTES, which Redis may hold twice over (open streams' text grown by APPEND), beside
 * 32 MB of everything else; measured in test/integration/storage-quota.test.ts.
 */
export const REDIS_QUOTA_RULE = { perQuotaByte: 2, headroomBytes: 32 * 2 ** 20 } as const;

/** How many bots, each at its full quota of `quotaBytes`, a Redis of `maxmemoryBytes` holds by the rule. */
export function botsRedisHolds(maxmemoryBytes: number, quotaBytes: number): number {
  return Math.floor((maxmemoryBytes - REDIS_QUOTA_RULE.headroomBytes) / (REDIS_QUOTA_RULE.perQuotaByte * quotaBytes));
}

/** The V8 heap limit Node 24 gives a process (with the image's 16 MiB semi-spaces) under a container limit. */
export function heapLimitBytes(containerLimitBytes: number): number {
  return containerLimitBytes / 2 + 48 * MiB;
}

export interface Load {
  connections: number;
  messagesInFlight: number;
  messageBytes: number;
}

/** Predicted container memory and V8 heap of one replica under `load`. */
export function predictedMemory({ connections, messagesInFlight, messageBytes }: Load): { container: number; heap: number } {
  const part = (r: (typeof SIZING_RULE)['container' | 'heap']) =>
    r.baseBytes + connections * r.perConnectionBytes + messagesInFlight * r.perMessageBytes(messageBytes);
  return { container: part(SIZING_RULE.container), heap: part(SIZING_RULE.heap) };
}

/** Whether `load` stays below `highWater` of both the container's limit and the heap limit. */
export function fits(load: Load, containerLimitBytes: number, highWater: number): boolean {
  const p = predictedMemory(load);
  return p.container <= highWater * containerLimitBytes && p.heap <= highWater * heapLimitBytes(containerLimitBytes);
}
