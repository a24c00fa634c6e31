import { positive } from './checks';

// Hand-written rather than lru-cache: the embed bundle has a 16 KB min+gzip budget, and this is 20 lines.
/**
 * A bounded set of recently seen ids, oldest evicted first. Used to drop inbound duplicates, e.g.
 * a message delivered to two sockets of one tab across a reconnect.
 */
export class RecentIds {
  // A Set iterates in insertion order, so its first element is the least recently seen.
  private readonly ids = new Set<string>();

  constructor(private readonly limit = 1000) {
    positive(limit, limit, 'dedupeLimit', true);
  }

  /** Records `id`; returns true when it was already recorded. */
  seen(id: string): boolean {
    if (this.ids.delete(id)) {
      this.ids.add(id);
      return true;
    }
    this.ids.add(id);
    if (this.ids.size > this.limit) this.ids.delete(this.ids.values().next().value as string);
    return false;
  }

  /** Whether `id` is recorded, without recording it. */
  has(id: string): boolean {
    return this.ids.has(id);
  }

  get size(): number {
    return this.ids.size;
  }
}
