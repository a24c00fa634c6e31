import { finalMessage } from '../log-entries';
import type {
  DeltaPublication,
  DeltaResult,
  EndedStream,
  OpenStream,
  StreamBounds,
  StreamEnding,
  StreamRecord,
  StreamRef,
  StreamStore,
  StreamTarget,
} from '../stream-store';
import type { MemoryConversationLog } from './memory-conversation.log';
import { StreamText } from './stream-text';

interface Held extends Omit<OpenStream, 'text'> {
  text: StreamText;
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
      text: new StreamText(),
      seq: 0,
      expiresAt: now + bounds.ttlMs,
    });
    if (logged) this.log.startStreamNow(record.message.agentId, record.clientId, record.message);
  }

  async append(
    { agentId, id }: StreamTarget,
    text: string,
    bounds: StreamBounds,
    _publication: DeltaPublication | null,
    renew: boolean,
  ): Promise<DeltaResult> {
    const held = this.live(agentId, id);
    if (!held) return { ok: false, reason: 'not-found' };
    const bytes = Buffer.byteLength(text);
    if (held.text.bytes + bytes > bounds.maxBytes) return { ok: false, reason: 'too-large' };
    held.text.append(text, bytes, bounds.maxBytes);
    if (renew) held.expiresAt = Date.now() + bounds.ttlMs;
    return { ok: true, seq: ++held.seq };
  }

  // One replica: no publication, the caller emits the end.
  async end(agentId: string, id: string, ending: StreamEnding, logged: boolean): Promise<EndedStream | null> {
    const held = this.live(agentId, id);
    if (!held) return null;
    this.streams.delete(key(agentId, id));
    const final = finalMessage(held.message, ending.text ?? held.text.toString(), ending.status, ending.data ?? held.message.data);
    if (logged) this.log.endStreamNow(agentId, held.clientId, final);
    return { final, seq: held.seq, clientId: held.clientId };
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
  return { message: held.message, clientId: held.clientId, owner: held.owner, text: held.text.toString(), seq: held.seq };
}
