import { LRUCache } from 'lru-cache';
import type { AgentDepartures } from '../agent-departures';

/** Departure marks of the embedded hub's bots, each expiring after its grace; bounded in count. */
export class MemoryAgentDepartures implements AgentDepartures {
  readonly marks = new LRUCache<string, string>({ max: 100_000 });

  async mark(agentId: string, mark: string, ttlMs: number): Promise<void> {
    this.marks.set(agentId, mark, { ttl: Math.max(1, ttlMs) });
  }

  async get(agentId: string): Promise<string | null> {
    return this.marks.get(agentId) ?? null;
  }

  async clear(agentId: string, mark?: string): Promise<void> {
    if (mark === undefined || this.marks.get(agentId) === mark) this.marks.delete(agentId);
  }
}
