import type { LoggedMessage } from '../conversation-log';
import { replayChanges } from '../stream-changes';
import {
  finalOf,
  type ChangeFrame,
  type DeltaPublication,
  type DeltaResult,
  type EncodedChange,
  type EndedStream,
  type EndPublications,
  type OpenStream,
  type StreamBounds,
  type StreamEnding,
  type StreamRecord,
  type StreamRef,
  type StreamStore,
  type StreamTarget,
} from '../stream-store';
import { streamStartJson } from '../log-entries';
import { messageEnd } from '../../protocol';
import { hashTag, type RedisClient } from './redis-client';
import type { RedisConversationLog } from './redis-conversation.store';
import { luaScript } from './lua-script';
import { QuotaExceededError } from '../bot-quota';
import { ConversationHeldError } from '../control-store';
import { controlKey, controlRecordOf } from './redis-control.store';

// Layout, in the bot's hash slot beside its log: per stream a hash `…{<agentId>}:stream:<id>` (the start
// message `m`, `client`, `owner`, `seq`, the `bytes` counted against the bound) and its changes
// `…:stream:<id>:changes` (APPEND per change, one line of JSON each: see store/stream-changes.ts); per
// conversation a set `…:streams:<clientId>` of open ids. All expire `ttlMs` after the open or the last
// change that renewed them (the owner renews at least every quarter of it), so nothing outlives a dead
// replica for long; the orphan sweep (`…{streams}:orphans`, a sorted set of every open stream by the
// time its owner last promised to be alive) ends them before that. JSON a client reads (a change's
// event, the final, its `message:end`) is built by the caller in TypeScript; the scripts only store,
// count and publish it. Every script that stores also keeps the bot's storage quota (redis-quota.ts).

const OPEN = luaScript('stream/open');

const APPEND = luaScript('stream/append');

const END = luaScript('stream/end');

const GET = luaScript('stream/get');

const OPEN_OF = luaScript('stream/open-of');

type Row = [message: string, client: string, owner: string, seq: string, changes: string];

/** See {@link RedisStreamStore.prepare}. */
interface Prepared {
  /** Hash, changes, the conversation's set (a change that renews the expiry touches it), the quota's three. */
  keys: string[];
  quotaArgs: (string | number)[];
}

/** How often an end is built again when a change came between its read and its write. */
const END_ATTEMPTS = 5;

/** Open streams on Redis; see the layout above. */
export class RedisStreamStore implements StreamStore {
  private readonly orphanKey: string;

  /** What {@link prepare} derived per stream target. */
  private readonly prepared = new WeakMap<StreamTarget, Prepared>();

  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    private readonly log: RedisConversationLog,
  ) {
    this.orphanKey = `${prefix}${hashTag('streams')}:orphans`;
  }

  async open(record: StreamRecord, bounds: StreamBounds, logged: boolean): Promise<void> {
    const { message, clientId, owner } = record;
    const { agentId, id } = message;
    const keys = [...this.streamKeys(agentId, id, clientId), ...this.log.appendKeys(agentId, clientId)];
    const [, json, max, ttl] = this.log.appendArgs(id, streamStartJson(message));
    const args = [
      JSON.stringify(message),
      clientId,
      owner,
      bounds.ttlMs,
      logged ? '1' : '',
      id,
      json,
      max,
      ttl,
      Date.now(),
      ...this.log.quotaArgs(agentId, clientId),
      this.log.quota.limits.maxOpenStreams,
    ];
    const held = controlKey(this.prefix, agentId, clientId);
    const opened = await OPEN.run<number | [number, string[]] | [-5, string]>(
      this.redis,
      [...keys, ...this.log.quotaKeys(agentId), held],
      args,
    );
    if (Array.isArray(opened) && opened[0] === -5) throw new ConversationHeldError(controlRecordOf(agentId, clientId, opened[1] as string));
    if (opened === -3) throw new QuotaExceededError(agentId, 'streams');
    if (opened === -4) throw new QuotaExceededError(agentId, 'bytes');
    const [result, evicted] = opened as [number, string[]];
    this.log.evicted(agentId, evicted);
    if (logged) await this.log.appended(agentId, clientId, result);
  }

  async append(
    stream: StreamTarget,
    change: EncodedChange,
    bounds: StreamBounds,
    publication: DeltaPublication | null,
    frame: ChangeFrame | null,
    renew: boolean,
  ): Promise<DeltaResult> {
    const prepared = this.prepare(stream);
    const published = publication !== null && frame !== null;
    const args = [
      change.record,
      change.bytes,
      bounds.maxBytes,
      renew ? bounds.ttlMs : '',
      published ? publication.channel : '',
      published ? publication.before + frame.head : '',
      published ? frame.tail + publication.after : '',
      Date.now(),
      ...prepared.quotaArgs,
      stream.id,
    ];
    const appended = await APPEND.run<number | [number, string[]]>(this.redis, prepared.keys, args);
    let seq: number;
    if (typeof appended === 'number') seq = appended;
    else {
      [seq] = appended;
      this.log.evicted(stream.agentId, appended[1]);
    }
    if (seq === -1) return { ok: false, reason: 'not-found' };
    if (seq === -2) return { ok: false, reason: 'too-large' };
    if (seq === -3) return { ok: false, reason: 'quota' };
    return { ok: true, seq };
  }

  async end(
    agentId: string,
    id: string,
    ending: StreamEnding,
    logged: boolean,
    publicationFor?: EndPublications,
  ): Promise<EndedStream | null> {
    // The final is built here from what the stream holds, and written only if nothing changed since
    // (an approval decided on another replica may come between): else read and build again.
    for (let attempt = 1; ; attempt++) {
      const open = await this.get(agentId, id);
      if (!open) return null;
      const { clientId } = open;
      const final = finalOf(open, ending);
      const [stream, clock, marker] = this.log.appendKeys(agentId, clientId);
      const keys = [
        ...this.streamKeys(agentId, id, clientId),
        stream,
        clock,
        marker,
        this.log.overlayKey(agentId, clientId),
        ...this.log.quotaKeys(agentId),
      ];
      const { maxMessages, ttlS } = this.log.limits;
      const publication = publicationFor?.(agentId, clientId) ?? null;
      const ended =
        publication === null ? '' : `${publication.before}${JSON.stringify(messageEnd(final, ending.status))}${publication.after}`;
      const args = [
        id,
        JSON.stringify(final),
        open.seq,
        logged ? '1' : '',
        maxMessages,
        ttlS,
        Date.now(),
        publication?.channel ?? '',
        ended,
        ...this.log.quotaArgs(agentId, clientId),
      ];
      const result = await END.run<number | null>(this.redis, keys, args);
      if (result === null) return null;
      if (result !== -1) return { final, seq: result, clientId, published: publication !== null };
      if (attempt === END_ATTEMPTS) throw new Error(`stream ${id} kept changing while it was being ended`);
    }
  }

  async get(agentId: string, id: string): Promise<OpenStream | null> {
    const [hash, text] = this.streamKeys(agentId, id, null);
    const row = await GET.run<Row | null>(this.redis, [hash, text]);
    return row ? parseRow(row) : null;
  }

  async openOf(agentId: string, clientId: string): Promise<OpenStream[]> {
    const set = this.setKey(agentId, clientId);
    const rows = await OPEN_OF.run<Row[]>(this.redis, [set], [this.log.botKey(agentId)]);
    return rows.map(parseRow).sort((a, b) => (a.message.id < b.message.id ? -1 : 1));
  }

  async keepAlive(refs: readonly StreamRef[], untilMs: number): Promise<void> {
    if (refs.length === 0) return;
    await this.redis.zadd(this.orphanKey, ...refs.flatMap((ref) => [untilMs, member(ref)]));
  }

  async orphans(nowMs: number, limit: number): Promise<StreamRef[]> {
    const members = await this.redis.zrangebyscore(this.orphanKey, '-inf', nowMs, 'LIMIT', 0, limit);
    return members.map((m) => {
      const at = m.indexOf(' ');
      return { agentId: m.slice(0, at), id: m.slice(at + 1) };
    });
  }

  async forget(refs: readonly StreamRef[]): Promise<void> {
    if (refs.length > 0) await this.redis.zrem(this.orphanKey, ...refs.map(member));
  }

  /**
   * What every change of a stream shares: its keys. Built at its first change and kept by the store
   * against the caller's target (the relay passes one per stream), so a change builds only its own
   * part; dropped with the target.
   */
  private prepare(stream: StreamTarget): Prepared {
    const cached = this.prepared.get(stream);
    if (cached) return cached;
    const keys = [...this.streamKeys(stream.agentId, stream.id, stream.clientId), ...this.log.quotaKeys(stream.agentId)];
    const prepared: Prepared = { keys, quotaArgs: this.log.quotaArgs(stream.agentId, stream.clientId) };
    this.prepared.set(stream, prepared);
    return prepared;
  }

  /** Hash, text and (when the conversation is known) the conversation's set of open streams. */
  private streamKeys(agentId: string, id: string, clientId: string | null): string[] {
    const hash = `${this.log.botKey(agentId)}:stream:${id}`;
    return clientId === null ? [hash, `${hash}:changes`, hash] : [hash, `${hash}:changes`, this.setKey(agentId, clientId)];
  }

  private setKey(agentId: string, clientId: string): string {
    return `${this.log.botKey(agentId)}:streams:${clientId}`;
  }
}

/** An agentId has no space (AGENT_ID_PATTERN). */
function member(ref: StreamRef): string {
  return `${ref.agentId} ${ref.id}`;
}

function parseRow([message, client, owner, seq, changes]: Row): OpenStream {
  const start = JSON.parse(message) as LoggedMessage;
  const { parts, text } = replayChanges(start, changes);
  return { message: start, clientId: client, owner, seq: Number(seq), text, parts };
}
