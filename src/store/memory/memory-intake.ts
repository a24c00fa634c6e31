import type { Intake, IntakeRequest, MessageIntake } from '../store';
import type { MemoryConversationLog } from './memory-conversation.log';
import type { MemoryDedupeStore } from './memory-dedupe.store';
import type { MemoryPresenceStore } from './memory-presence.store';

/**
 * {@link MessageIntake} of the embedded store: the dedupe claim, the runtime lookup and the append
 * run synchronously, one after the other, and the message pays for one promise instead of three.
 * What may change between them on another store (a runtime leaving) the relay handles anyway. It
 * counts no subscribers and hands nothing off: this store has no pub/sub.
 */
export class MemoryIntake implements MessageIntake {
  constructor(
    private readonly dedupe: MemoryDedupeStore,
    private readonly presence: MemoryPresenceStore,
    private readonly log: MemoryConversationLog,
  ) {}

  async admit({ key, record, ttlS, clientId, message }: IntakeRequest): Promise<Intake> {
    const existing = this.dedupe.claimNow(key, record, ttlS);
    if (existing?.delivered) return { existing, runtimes: [], logged: false, subscribers: null, handedTo: null };
    const runtimes = this.presence.runtimesNow(key.agentId);
    if (existing || runtimes.length === 0 || message === null)
      return { existing, runtimes, logged: false, subscribers: null, handedTo: null };
    this.log.appendNow(key.agentId, clientId, message);
    return { existing, runtimes, logged: true, subscribers: null, handedTo: null };
  }
}
