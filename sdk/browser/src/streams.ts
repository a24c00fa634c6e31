import type { MessageDelta, MessageStart } from '../../../src/protocol';

/** Payload of `message:update`: the whole text of an open stream so far, holding `seq` deltas. */
export interface MessageUpdate {
  id: string;
  text: string;
  seq: number;
}

/** What `message` carries when a stream starts: the text so far, and `streaming: true`. */
export type StreamingMessage = MessageStart & { streaming: true };

/**
 * The streams of the conversation that are open, with the text each holds. A delta is appended
 * only when its `seq` is the next one: an older or repeated one changes nothing, and after a gap
 * the stream waits for a fresh snapshot (`message:start` on the next connect) or its end.
 *
 * Streams held when a connection ends go `stale`: the next connect announces the ones still open
 * with a `message:start`, which replaces the text held (the page already shows that message).
 */
export class OpenStreams {
  private readonly open = new Map<string, MessageUpdate>();
  private readonly stale = new Set<string>();

  /** A `message:start`: a new stream (true), or a snapshot of one held (false). */
  start(m: MessageStart): boolean {
    const known = this.open.has(m.id) || this.stale.delete(m.id);
    this.open.delete(m.id);
    this.open.set(m.id, { id: m.id, text: m.text, seq: m.seq });
    return !known;
  }

  /** A `message:delta`: the stream's whole text after it, or undefined when it is not the next one. */
  delta(d: MessageDelta): MessageUpdate | undefined {
    const held = this.open.get(d.id);
    if (!held || d.seq !== held.seq + 1 || typeof d.text !== 'string') return undefined;
    held.seq = d.seq;
    held.text += d.text;
    return { ...held };
  }

  /** Forgets a stream that ended; true when it was held (open or stale). */
  end(id: string): boolean {
    return this.open.delete(id) || this.stale.delete(id);
  }

  /** The text and seq held for an open stream. */
  get(id: string): MessageUpdate | undefined {
    return this.open.get(id);
  }

  /** The newest open stream's id. */
  latest(): string | undefined {
    let id: string | undefined;
    for (id of this.open.keys());
    return id;
  }

  /**
   * A new session: what is held waits for its snapshot. What the last session held stale and did
   * not announce has ended (the hub announces every open stream on each connect).
   */
  reconnected(): void {
    this.stale.clear();
    for (const id of this.open.keys()) this.stale.add(id);
    this.open.clear();
  }
}
