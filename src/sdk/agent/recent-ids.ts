// Hand-written rather than lru-cache: the agent SDK ships with socket.io-client as its only runtime
// dependency (docs/agent-sdk.md), and this is 20 lines.
/**
 * The latest `limit` ids of a kind, oldest forgotten first: the messages already handed to the
 * handler, so a redelivered message (the hub retries one whose first delivery was not confirmed)
 * reaches the handler once; the messages a user stopped lately, so a stream started after the stop
 * starts stopped.
 */
export class RecentIds {
  // A Set iterates in insertion order, so its first element is the oldest id.
  private readonly ids = new Set<string>();

  constructor(private readonly limit = 10_000) {
    if (!Number.isInteger(limit) || limit < 1) throw new TypeError('RelayAgent: dedupeSize must be a positive integer');
  }

  has(id: string): boolean {
    return this.ids.has(id);
  }

  add(id: string): void {
    if (this.ids.has(id)) return;
    this.ids.add(id);
    if (this.ids.size > this.limit) this.ids.delete(this.ids.values().next().value as string);
  }

  /** Records `id`; returns true when it was already recorded. */
  seen(id: string): boolean {
    if (this.ids.has(id)) return true;
    this.add(id);
    return false;
  }

  get size(): number {
    return this.ids.size;
  }
}
