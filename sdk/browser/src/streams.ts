import type { MessageDelta, MessagePart, MessagePartEvent, MessageStart } from '../../../src/protocol';

/** Payload of `message:update`: the whole message of an open stream so far (text, parts), holding `seq` changes. */
export type MessageUpdate = MessageStart;

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
    this.open.set(m.id, { ...m });
    return !known;
  }

  /**
   * A `message:delta` or `message:part`: the stream's whole message after it, or undefined when it
   * is not the next one. A delta to part 0 of a message without parts is plain text.
   */
  change(c: MessageDelta | MessagePartEvent): MessageUpdate | undefined {
    const held = this.open.get(c.id);
    if (!held || c.seq !== held.seq + 1) return undefined;
    held.seq = c.seq;
    if ('part' in c || (held.parts ?? c.index)) {
      // The parts a plain-text snapshot implies: one text part, or none yet.
      const parts = (held.parts = [...(held.parts ?? (held.text ? [{ type: 'text', text: held.text }] : []))]);
      const i = c.index ?? parts.length;
      const p = parts[i];
      parts[i] =
        'part' in c
          ? c.part
          : !p
            ? { type: 'text', text: c.text }
            : p.type === 'tool'
              ? { ...p, inputText: (p.inputText ?? '') + c.text }
              : ({ ...p, text: (p as { text: string }).text + c.text } as MessagePart);
      held.text = parts.map((p) => (p.type === 'text' ? p.text : '')).join('');
    } else held.text += c.text;
    return { ...held };
  }

  /** Forgets a stream that ended; true when it was held (open or stale). */
  end(id: string): boolean {
    return this.open.delete(id) || this.stale.delete(id);
  }

  /** The message held for an open stream. */
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
