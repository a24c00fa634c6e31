import { LRUCache } from 'lru-cache';
import {
  botRecord,
  type ControlCas,
  type ControlChange,
  type ControlRecord,
  type ControlStore,
  type ConversationRef,
} from '../control-store';

/**
 * Control records of the embedded single replica; lost on restart. Conversations handed off are
 * kept while they are; those handed back, as Redis keeps them (a day), in a bounded cache.
 */
export class MemoryControlStore implements ControlStore {
  private readonly records = new Map<string, ControlRecord>();
  /** Conversations handed back, with their version, so a compare-and-set against an older read still fails. */
  private readonly handedBack = new LRUCache<string, ControlRecord>({ max: 100_000, ttl: 86_400_000 });

  async get(agentId: string, clientId: string): Promise<ControlRecord> {
    return this.read(agentId, clientId);
  }

  async compareAndSet(agentId: string, clientId: string, expectedVersion: number, next: ControlChange): Promise<ControlCas> {
    const current = this.read(agentId, clientId);
    if (current.version !== expectedVersion) return { ok: false, current };
    const key = keyOf(agentId, clientId);
    const record: ControlRecord = { ...next, agentId, clientId, version: current.version + 1 };
    if (record.state === 'bot') {
      this.records.delete(key);
      this.handedBack.set(key, record);
    } else {
      this.handedBack.delete(key);
      this.records.set(key, record);
    }
    return { ok: true, record: { ...record } };
  }

  async listHandedOff(agentId: string): Promise<ControlRecord[]> {
    return [...this.records.values()]
      .filter((r) => r.agentId === agentId)
      .sort((x, y) => Date.parse(x.since ?? '') - Date.parse(y.since ?? ''))
      .map((r) => ({ ...r }));
  }

  async idleSince(beforeMs: number, limit: number): Promise<ConversationRef[]> {
    const out: ConversationRef[] = [];
    for (const r of this.records.values()) {
      if (out.length >= limit) break;
      if (r.state === 'human' && r.lastOperatorAt !== undefined && Date.parse(r.lastOperatorAt) <= beforeMs) {
        out.push({ agentId: r.agentId, clientId: r.clientId });
      }
    }
    return out;
  }

  /** Nothing to do: the memory store reads its records themselves. */
  async dropIdle(): Promise<void> {}

  clear(): void {
    this.records.clear();
    this.handedBack.clear();
  }

  /** The record now, for the writes that check it in the same step (the intake, a reply, a stream's open). */
  read(agentId: string, clientId: string): ControlRecord {
    const key = keyOf(agentId, clientId);
    const record = this.records.get(key) ?? this.handedBack.get(key);
    return record ? { ...record } : botRecord(agentId, clientId);
  }
}

/** agentIds hold no NUL, so the key parses one way whatever the clientId. */
function keyOf(agentId: string, clientId: string): string {
  return `${agentId}\u0000${clientId}`;
}
