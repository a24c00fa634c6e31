import { replayChanges } from '../stream-changes';
import {
  finalOf,
  type ChangeFrame,
  type DeltaPublication,
  type DeltaResult,
  type EncodedChange,
  type EndedStream,
  type OpenStream,
  type StreamBounds,
  type StreamEnding,
  type StreamRecord,
  type StreamRef,
  type StreamStore,
  type StreamTarget,
} from '../stream-store';
import type { MemoryConversationLog } from './memory-conversation.log';
import { StreamText } from './stream-text';

interface Held extends StreamRecord {
  /** The changes, encoded as on Redis (stream-changes.ts): outside the V8 heap, rebuilt into parts when read. */
  changes: StreamText;
  /** Bytes counted against the bound. */
  bytes: number;
  seq: number;
  expiresAt: number;
}

/**
 * Open streams of the single replica. Bounded by the relay (STREAM_MAX_OPEN per runtime socket,
 * STREAM_MAX_BYTES each) and by expiry after `ttlMs` untouched, swept on every open.
 */
export class MemoryStreamStore implements StreamStore {
  private readonly streams = new Map<string, Held>();

  constructor(private readonly log: MemoryConversationLog) {}

  get size(): number {
    return this.streams.size;
  }

  async open(record: StreamRecord, bounds: StreamBounds, logged: boolean): Promise<void> {
    const now = Date.now();
    for (const [id, held] of this.streams) if (held.expiresAt <= now) this.streams.delete(id);
    this.streams.set(key(record.message.agentId, record.message.id), {
      ...record,
      changes: new StreamText(),
      bytes: 0,
      seq: 0,
      expiresAt: now + bounds.ttlMs,
    });
    if (logged) this.log.startStreamNow(record.message.agentId, record.clientId, record.message);
  }

  async append(
    { agentId, id }: StreamTarget,
    change: EncodedChange,
    bounds: StreamBounds,
    _publication: DeltaPublication | null,
    _frame: ChangeFrame | null,
    renew: boolean,
  ): Promise<DeltaResult> {
    const held = this.live(agentId, id);
    if (!held) return { ok: false, reason: 'not-found' };
    if (held.bytes + change.bytes > bounds.maxBytes) return { ok: false, reason: 'too-large' };
    held.bytes += change.bytes;
    held.changes.append(change.record, Buffer.byteLength(change.record), Number.MAX_SAFE_INTEGER);
    if (renew) held.expiresAt = Date.now() + bounds.ttlMs;
    return { ok: true, seq: ++held.seq };
  }

  // One replica: no publication, the caller emits the end.
  async end(agentId: string, id: string, ending: StreamEnding, logged: boolean): Promise<EndedStream | null> {
    const held = this.live(agentId, id);
    if (!held) return null;
    this.streams.delete(key(agentId, id));
    const final = finalOf(snapshot(held), ending);
    if (logged) this.log.endStreamNow(agentId, held.clientId, final);
    return { final, seq: held.seq, clientId: held.clientId, published: false };
  }

  async get(agentId: string, id: string): Promise<OpenStream | null> {
    const held = this.live(agentId, id);
    return held ? snapshot(held) : null;
  }

  async openOf(agentId: string, clientId: string): Promise<OpenStream[]> {
    const now = Date.now();
    const out: OpenStream[] = [];
    for (const held of this.streams.values()) {
      if (held.message.agentId === agentId && held.clientId === clientId && held.expiresAt > now) out.push(snapshot(held));
    }
    return out.sort((a, b) => (a.message.id < b.message.id ? -1 : 1));
  }

  // One replica: nothing outlives its owner but by expiry.
  async keepAlive(): Promise<void> {}
  async orphans(): Promise<StreamRef[]> {
    return [];
  }
  async forget(): Promise<void> {}

  clear(): void {
    this.streams.clear();
  }

  private live(agentId: string, id: string): Held | undefined {
    const held = this.streams.get(key(agentId, id));
    if (held && held.expiresAt <= Date.now()) {
      this.streams.delete(key(agentId, id));
      return undefined;
    }
    return held;
  }
}

function key(agentId: string, id: string): string {
  return `${agentId} ${id}`;
}

function snapshot(held: Held): OpenStream {
  const { parts, text } = replayChanges(held.message, held.changes.toString());
  return { message: held.message, clientId: held.clientId, owner: held.owner, text, parts, seq: held.seq };
}
