import { RateBudgets, type RateBudget } from '../../limits/rate-budgets';
import { QuotaExceededError } from '../bot-quota';
import type { Intake, IntakeRequest, MessageIntake } from '../store';
import type { MemoryConversationLog } from './memory-conversation.store';
import type { MemoryDedupeStore } from './memory-dedupe.store';
import type { MemoryPresenceStore } from './memory-presence.store';
import type { MemoryControlStore } from './memory-control.store';

/**
 * {@link MessageIntake} of the embedded store: the sender's budget, the dedupe claim, the runtime
 * lookup, the control state's read and the append run synchronously, one after the other, and the message pays for one
 * promise instead of four.
 * What may change between them on another store (a runtime leaving) the relay handles anyway. It
 * counts no subscribers and hands nothing off: this store has no pub/sub.
 */
export class MemoryIntake implements MessageIntake {
  private budgets?: [RateBudget, RateBudgets];

  constructor(
    private readonly dedupe: MemoryDedupeStore,
    private readonly presence: MemoryPresenceStore,
    private readonly log: MemoryConversationLog,
    private readonly control: MemoryControlStore,
  ) {}

  async admit({ key, record, ttlS, clientId, message, budget }: IntakeRequest): Promise<Intake> {
    if (budget && !this.budgetsFor(budget).take(`${key.agentId}\u0000${key.sub}`)) return LIMITED;
    const { state: control } = this.control.read(key.agentId, clientId);
    const existing = this.dedupe.claimNow(key, record, ttlS);
    if (existing?.delivered) return { existing, runtimes: [], logged: false, subscribers: null, handedTo: null, control };
    const runtimes = this.presence.runtimesNow(key.agentId);
    if (existing || runtimes.length === 0 || message === null)
      return { existing, runtimes, logged: false, subscribers: null, handedTo: null, control };
    try {
      this.log.appendNow(key.agentId, clientId, message);
    } catch (err) {
      if (!(err instanceof QuotaExceededError)) throw err;
      // Refused, the message was never taken: its retry is a fresh message, not a duplicate.
      this.dedupe.releaseNow(key);
      return QUOTA;
    }
    return { existing, runtimes, logged: true, subscribers: null, handedTo: null, control };
  }

  /** The buckets of `budget`: one hub passes the same budget on every message. */
  private budgetsFor(budget: RateBudget): RateBudgets {
    if (this.budgets?.[0] !== budget) this.budgets = [budget, new RateBudgets(budget)];
    return this.budgets[1];
  }
}

const QUOTA: Intake = { quota: true, existing: null, runtimes: [], logged: false, subscribers: null, handedTo: null, control: 'bot' };
const LIMITED: Intake = { limited: true, existing: null, runtimes: [], logged: false, subscribers: null, handedTo: null, control: 'bot' };
