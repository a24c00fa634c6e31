import type { Store } from '../store';
import { MemoryApiKeyStore } from './memory-api-key.store';
import { MemoryCounterStore } from './memory-counter.store';
import { MemoryDeactivationStore } from './memory-deactivation.store';
import { MemoryDedupeStore } from './memory-dedupe.store';
import { MemoryPresenceStore } from './memory-presence.store';
import { MemoryUserStore } from './memory-user.store';

/** State of the embedded single replica. Lost on restart. */
export class MemoryStore implements Store {
  readonly kind = 'memory' as const;
  readonly dedupe = new MemoryDedupeStore();
  readonly deactivations = new MemoryDeactivationStore();
  readonly presence = new MemoryPresenceStore();
  readonly users = new MemoryUserStore();
  readonly apiKeys = new MemoryApiKeyStore();
  readonly counters = new MemoryCounterStore();

  async close(): Promise<void> {
    this.dedupe.records.close();
    this.counters.counters.close();
  }
}
