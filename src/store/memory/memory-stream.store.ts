import { replayChanges } from '../stream-changes';
import { ConversationHeldError } from '../control-store';
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
import { QUOTA_STREAM_OVERHEAD, QuotaExceededError, type BotQuota } from '../bot-quota';
import type { MemoryConversationLog } from './memory-conversation.store';
import { StreamText } from './stream-text';

interface Held extends StreamRecord {
  /** The changes, encoded as on Redis (stream-changes.ts): outside the V8 heap, rebuilt into parts when read. */
  changes: StreamText;
  /** Bytes counted against the bound. */
  bytes: number;
  /** Bytes of the changes as stored, counted in the bot's quota. */
  stored: number;
  seq: number;
  expiresAt: number;
}

/** A bot's open streams: how many, and the bytes they count in its quota. */
interface BotStreams {
  open: number;
  bytes: number;
}

/**
 * Open streams of the single replica. Bounded by the relay (STREAM_MAX_OPEN per runtime socket,
 * STREAM_MAX_BYTES each), by the bot's quota (BOT_MAX_OPEN_STREAMS, and the text in
 * BOT_STORAGE_MAX_BYTES with the bot's logs) and by expiry after `ttlMs` untouched, swept on every open.
 */
export class MemoryStreamStore implements StreamStore {
  private readonly streams = new Map<string, Held>();
  private readonly bots = new Map<string, BotStreams>();

  constructor(
    private readonly log: MemoryConversationLog,
    private readonly quota: BotQuota,
  ) {
    log.countStreams((agentId) => this.bots.get(agentId)?.bytes ?? 0);
    // A stream open while its conversation is erased goes with it: its later deltas and end find nothing.
    log.onErase((agentId, clientId) => {
      for (const [k, held] of this.streams) {
        if (held.clientId === clientId && (agentId === null || held.message.agentId === agentId)) this.drop(k, held);
      }
    });
  }

  get size(): number {
    return this.streams.size;
  }

  async open(record: StreamRecord, bounds: StreamBounds, logged: boolean): Promise<void> {
    const now = Date.now();
    for (const [k, held] of this.streams) if (held.expiresAt <= now) this.drop(k, held);
    const { agentId } = record.message;
    const control = this.log.control.read(agentId, record.clientId);
    if (control.state === 'human') throw new ConversationHeldError(control);
    const bot = this.bots.get(agentId) ?? { open: 0, bytes: 0 };
    if (bot.open >= this.quota.maxOpenStreams) throw new QuotaExceededError(agentId, 'streams');
    if (!this.log.reserve(agentId, record.clientId, QUOTA_STREAM_OVERHEAD)) throw new QuotaExceededError(agentId, 'bytes');
    // The start is logged first: refused by the quota, it leaves no stream behind.
    if (logged) this.log.startStreamNow(agentId, record.clientId, record.message);
    this.bots.set(agentId, bot);
    bot.open++;
    bot.bytes += QUOTA_STREAM_OVERHEAD;
    this.streams.set(key(agentId, record.message.id), {
      ...record,
      changes: new StreamText(),
      bytes: 0,
      stored: 0,
      seq: 0,
      expiresAt: now + bounds.ttlMs,
    });
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
    // The quota counts the change as stored, as on Redis.
    const stored = Buffer.byteLength(change.record);
    if (!this.log.reserve(agentId, held.clientId, stored)) return { ok: false, reason: 'quota' };
    held.bytes += change.bytes;
    held.stored += stored;
    held.changes.append(change.record, stored, Number.MAX_SAFE_INTEGER);
    this.bots.get(agentId)!.bytes += stored;
    if (renew) held.expiresAt = Date.now() + bounds.ttlMs;
    return { ok: true, seq: ++held.seq };
  }

  // One replica: no publication, the caller emits the end.
  async end(agentId: string, id: string, ending: StreamEnding, logged: boolean): Promise<EndedStream | null> {
    const held = this.live(agentId, id);
    if (!held) return null;
    this.drop(key(agentId, id), held);
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
    this.bots.clear();
  }

  private live(agentId: string, id: string): Held | undefined {
    const held = this.streams.get(key(agentId, id));
    if (held && held.expiresAt <= Date.now()) {
      this.drop(key(agentId, id), held);
      return undefined;
    }
    return held;
  }

  /** Forgets a stream and gives its bytes back to its bot's quota. */
  private drop(k: string, held: Held): void {
    if (!this.streams.delete(k)) return;
    const { agentId } = held.message;
    const bot = this.bots.get(agentId)!;
    bot.open--;
    bot.bytes -= QUOTA_STREAM_OVERHEAD + held.stored;
    if (bot.open === 0) this.bots.delete(agentId);
  }
}

function key(agentId: string, id: string): string {
  return `${agentId} ${id}`;
}

function snapshot(held: Held): OpenStream {
  const { parts, text } = replayChanges(held.message, held.changes.toString());
  return { message: held.message, clientId: held.clientId, owner: held.owner, text, parts, seq: held.seq };
}
