import type { ClientInboundMessage, MessageEnd, Rating, StreamingMessage } from '../../sdk/embed';

/** A message of the conversation as the SDK hands it over (live, replayed or from history). */
export type ShownMessage = ClientInboundMessage | StreamingMessage | MessageEnd;

/** A bot message that is final: how it ended is known. */
type FinalMessage = ClientInboundMessage | MessageEnd;

const isStreaming = (m: ShownMessage): m is StreamingMessage => 'streaming' in m && m.streaming === true;

/** The elements of the demo page the conversation is drawn into. */
export interface ConversationElements {
  scroller: HTMLElement;
  log: HTMLElement;
  stopButton: HTMLElement;
}

/**
 * The conversation on screen: one list item per message, in log order whatever order they arrive
 * in, none twice; streamed answers grow in place and end with thumbs to rate them. Stop shows while
 * an answer is open or the bot is thinking.
 */
export class ConversationView {
  /**
   * Messages on screen, by id. The hub's ids are UUIDv7, so comparing them orders messages by time:
   * replays, live messages and history pages land in place, and none is shown twice.
   */
  readonly shown = new Map<string, HTMLElement>();
  private readonly streaming = new Set<string>();
  private thinking = false;

  constructor(
    private readonly el: ConversationElements,
    /** Saves a rating (`null` withdraws it); its failure becomes a note. */
    private readonly rate: (id: string, rating: Rating | null) => Promise<void>,
  ) {}

  /** Whether the reader is at (or near) the newest message, so new ones should keep it in view. */
  atBottom(): boolean {
    const { scroller } = this.el;
    return scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight < 40;
  }

  scrollToBottom(): void {
    this.el.scroller.scrollTop = this.el.scroller.scrollHeight;
  }

  /** Appends an item outside the conversation's order: a note, or the user's message being sent. */
  add(kind: 'me' | 'note', text: string): HTMLElement {
    const stick = this.atBottom();
    const item = document.createElement('li');
    item.className = kind;
    item.textContent = text;
    this.el.log.append(item);
    if (stick || kind === 'me') this.scrollToBottom();
    return item;
  }

  show(m: ShownMessage): void {
    if (this.shown.has(m.id)) {
      // A snapshot of an answer already on screen (e.g. a history page got there first).
      if (isStreaming(m)) this.setText(m.id, m.text);
      return;
    }
    const stick = this.atBottom();
    const item = document.createElement('li');
    item.dataset.id = m.id;
    if (m.author === 'user') {
      item.className = 'me';
      item.dataset.status = 'sent';
      item.textContent = m.text;
    } else if (m.author === 'system') {
      // A change of who answers, as history holds it (docs/handoff.md).
      item.className = 'note';
      item.textContent = m.text;
    } else if (m.author === 'operator') {
      item.className = 'bot operator';
      const name = document.createElement('span');
      name.className = 'who';
      name.textContent = ('operator' in m && m.operator?.name) || 'Operator';
      const text = document.createElement('span');
      text.className = 'text';
      text.textContent = m.text;
      item.append(name, text);
    } else {
      // The text in a span of its own, so the thumbs beside it add nothing to the message's text.
      item.className = 'bot';
      const text = document.createElement('span');
      text.className = 'text';
      text.textContent = m.text;
      item.append(text);
      if (isStreaming(m)) {
        item.dataset.streaming = 'true';
        this.streaming.add(m.id);
        this.updateStop();
      } else this.finish(item, m);
    }
    const later = Array.from(this.el.log.querySelectorAll<HTMLElement>('li[data-id]')).find((li) => li.dataset.id! > m.id);
    this.el.log.insertBefore(item, later ?? null);
    this.shown.set(m.id, item);
    if (stick && !later) this.scrollToBottom();
  }

  setText(id: string, text: string): void {
    const item = this.shown.get(id);
    if (!item) return;
    const stick = this.atBottom();
    item.querySelector('.text')!.textContent = text;
    if (stick) this.scrollToBottom();
  }

  /** A streamed answer ended: its final text, how it ended and the thumbs. */
  end(m: MessageEnd): void {
    if (!this.shown.has(m.id)) this.show(m);
    this.setText(m.id, m.text);
    this.finish(this.shown.get(m.id)!, m);
  }

  /** The bot is thinking, typing or using a tool (`label`), or `idle`. */
  setThinking(thinking: boolean): void {
    this.thinking = thinking;
    this.updateStop();
  }

  private updateStop(): void {
    this.el.stopButton.hidden = this.streaming.size === 0 && !this.thinking;
  }

  /** A bot message is final: how it ended (unless complete) and the thumbs to rate it. */
  private finish(item: HTMLElement, m: FinalMessage): void {
    delete item.dataset.streaming;
    this.streaming.delete(m.id);
    this.updateStop();
    if (m.status && m.status !== 'complete') item.dataset.status = m.status;
    if (item.querySelector('.thumbs')) return;
    const thumbs = document.createElement('span');
    thumbs.className = 'thumbs';
    const feedback = 'feedback' in m ? m.feedback : undefined;
    for (const [rating, label] of [
      ['up', 'Good answer'],
      ['down', 'Bad answer'],
    ] as const) {
      const button = document.createElement('button');
      button.type = 'button';
      button.className = rating;
      button.setAttribute('aria-label', label);
      button.setAttribute('aria-pressed', String(feedback?.rating === rating));
      button.addEventListener('click', () => {
        // Pressing the chosen thumb again withdraws the rating.
        const next = button.getAttribute('aria-pressed') === 'true' ? null : rating;
        this.rate(item.dataset.id!, next).then(
          () => {
            for (const b of Array.from(thumbs.children)) b.setAttribute('aria-pressed', String(b.className === next));
          },
          (err) => this.add('note', 'Feedback not saved: ' + codeOf(err)),
        );
      });
      thumbs.append(button);
    }
    item.append(thumbs);
  }
}

/** The code of a failure the SDK reports (`RelayChatError.code`), for a note on screen. */
export function codeOf(err: unknown): string {
  return String((err as { code?: unknown } | null | undefined)?.code);
}
