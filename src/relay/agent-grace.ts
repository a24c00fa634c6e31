import { randomUUID } from 'node:crypto';
import type { RuntimeEntry } from '../store/store';
import type { AgentStatusAnnouncer } from './agent-status';
import type { RelayContext } from './relay.context';

/** How often a waiting message looks for a runtime that connected on another replica. */
const POLL_INTERVAL_MS = 250;

/**
 * Makes bot restarts invisible to users (docs/protocol.md, "When a bot restarts"; AGENT_RECONNECT_GRACE_MS). When a bot's last
 * runtime leaves, the departure is recorded in shared state; until the grace ends, client messages
 * to the bot on any replica wait for a runtime of the bot to connect anywhere (found by polling
 * presence, and at once when it connects to this replica) instead of getting AGENT_OFFLINE.
 * `agent:status` offline is announced only when the grace ends with no runtime, and a runtime that
 * comes back within it ends the grace without an online announcement (nobody saw it offline).
 */
export class AgentGrace {
  private readonly timers = new Set<NodeJS.Timeout>();
  /** Wake-ups of messages waiting for a runtime of each bot. */
  private readonly sleepers = new Map<string, Set<() => void>>();
  private stopped = false;

  constructor(
    private readonly ctx: RelayContext,
    private readonly statuses: AgentStatusAnnouncer,
  ) {}

  private get graceMs(): number {
    return this.ctx.config.AGENT_RECONNECT_GRACE_MS;
  }

  /** The bot's last runtime left (here, or with its dead replica): offline after the grace unless one returns. */
  lastRuntimeLeft(agentId: string): void {
    const { store, logger } = this.ctx;
    if (this.graceMs === 0 || this.stopped) return this.statuses.announce(agentId, false);
    const mark = `${Date.now()}:${randomUUID()}`;
    store.departures.mark(agentId, mark, 2 * this.graceMs).catch((err: unknown) => {
      logger.warn({ err, agentId }, 'could not record the departure; messages to the bot get AGENT_OFFLINE during the grace');
    });
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      void this.graceEnded(agentId, mark);
    }, this.graceMs);
    this.timers.add(timer);
  }

  /**
   * A runtime of the bot entered presence here, making `count` runtimes. Resolves true when it
   * ended a grace, so the bot never looked offline and needs no online announcement.
   */
  async runtimeArrived(agentId: string, count: number): Promise<boolean> {
    this.wake(agentId);
    if (count !== 1 || this.graceMs === 0) return false;
    const mark = await this.ctx.store.departures.get(agentId);
    if (mark === null) return false;
    await this.ctx.store.departures.clear(agentId, mark);
    return Date.now() - departedAt(mark) < this.graceMs;
  }

  /** Milliseconds left of the bot's grace (0 when its last runtime did not leave recently). */
  async remainingMs(agentId: string): Promise<number> {
    if (this.graceMs === 0) return 0;
    const mark = await this.ctx.store.departures.get(agentId);
    return mark === null ? 0 : Math.max(0, departedAt(mark) + this.graceMs - Date.now());
  }

  /**
   * Waits until presence lists a runtime of the bot, or `deadline` (then resolves with none). It
   * pauses before each look, so runtimes that turn out gone are retried at most every poll interval.
   */
  async waitForRuntime(agentId: string, deadline: number): Promise<RuntimeEntry[]> {
    while (!this.stopped && Date.now() < deadline) {
      await this.sleep(agentId, Math.min(POLL_INTERVAL_MS, deadline - Date.now()));
      const runtimes = await this.ctx.store.presence.listRuntimes(agentId);
      if (runtimes.length > 0) return runtimes;
    }
    return [];
  }

  /** Ends every grace timer and wakes every waiting message (they answer AGENT_OFFLINE). */
  stop(): void {
    this.stopped = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    for (const agentId of [...this.sleepers.keys()]) this.wake(agentId);
  }

  private async graceEnded(agentId: string, mark: string): Promise<void> {
    const { store, logger } = this.ctx;
    try {
      const [current, runtimes] = await Promise.all([store.departures.get(agentId), store.presence.listRuntimes(agentId)]);
      // A runtime came back, or left again later (that departure's own timer decides).
      if (runtimes.length > 0 || (current !== null && current !== mark)) return;
      await store.departures.clear(agentId, mark);
    } catch (err) {
      logger.warn({ err, agentId }, 'could not check the bot after its grace; announcing it offline');
    }
    this.statuses.announce(agentId, false);
  }

  private sleep(agentId: string, ms: number): Promise<void> {
    return new Promise((resolve) => {
      let set = this.sleepers.get(agentId);
      if (!set) this.sleepers.set(agentId, (set = new Set()));
      const sleepers = set;
      const done = () => {
        clearTimeout(timer);
        sleepers.delete(done);
        if (sleepers.size === 0) this.sleepers.delete(agentId);
        resolve();
      };
      const timer = setTimeout(done, ms);
      sleepers.add(done);
    });
  }

  private wake(agentId: string): void {
    for (const done of [...(this.sleepers.get(agentId) ?? [])]) done();
  }
}

function departedAt(mark: string): number {
  return Number(mark.slice(0, mark.indexOf(':')));
}
