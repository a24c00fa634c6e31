import { h } from '../dom';
import { icon } from '../icons';
import type { Strings } from '../strings';
import { copyText } from './code-block';
import { PartsView, type PartsContext } from './parts-view';
import type { Part } from './parts/types';

/** A message as the transcript shows it. */
export interface ViewMessage {
  id: string;
  author: 'user' | 'agent' | 'operator' | (string & {});
  text: string;
  ts?: string;
  parts?: Part[];
  streaming?: boolean;
  /** How a stream ended, when not `complete`: `cancelled`, `interrupted`, `timeout`, `error`. */
  status?: string;
  feedback?: { rating: 'up' | 'down' | null; comment?: string };
  /** A user's message not acknowledged yet: `sending`, or `failed` (offered for retry). */
  delivery?: 'sending' | 'failed';
  /** Display name of an operator's message. */
  name?: string;
}

export interface MessageActions {
  feedback?(id: string, rating: 'up' | 'down' | null, comment?: string): Promise<void>;
  retry?(id: string): void;
}

/**
 * One message. The user's: a bubble of plain text, with "Not sent — retry" when it failed. The
 * bot's: its parts full width, a status in words when it did not complete, and (once finished) copy
 * and thumbs, the chosen thumb staying visible; thumbs down opens a short comment box.
 */
export class MessageView {
  readonly element: HTMLElement;
  private parts: PartsView | undefined;
  private readonly statusLine = h('p', { class: 'status' });
  private actions: HTMLElement | undefined;
  message: ViewMessage;

  constructor(
    message: ViewMessage,
    private readonly ctx: PartsContext & { actions: MessageActions },
  ) {
    this.message = message;
    const mine = message.author === 'user';
    // A change of who answers (docs/handoff.md): a centred line, nothing to rate or copy.
    const line = message.author === 'system';
    this.element = h('article', { class: mine ? 'msg user' : line ? 'msg sys' : 'msg bot', part: 'message', 'data-id': message.id });
    if (mine || line) this.element.append(h('div', { class: 'bubble' }, message.text), this.statusLine);
    else {
      this.parts = new PartsView(ctx);
      if (message.author === 'operator' && message.name)
        this.element.append(
          h(
            'p',
            { class: 'who' },
            h('span', { class: 'avatar', 'aria-hidden': 'true' }, message.name.slice(0, 1).toUpperCase()),
            message.name,
          ),
        );
      this.element.append(this.parts.element, this.statusLine);
    }
    this.update(message);
  }

  get suggestions(): { text: string; value?: string }[] {
    return this.parts?.suggestions ?? [];
  }

  /** Shows a newer state of the message (more text, new parts, the end, a delivery change). */
  update(message: ViewMessage): void {
    this.message = message;
    const { strings } = this.ctx;
    this.element.toggleAttribute('data-streaming', !!message.streaming);
    if (message.author === 'user' || message.author === 'system') {
      const bubble = this.element.firstElementChild!;
      if (bubble.textContent !== message.text) bubble.textContent = message.text;
      this.element.setAttribute('data-delivery', message.delivery ?? 'sent');
      this.statusLine.replaceChildren();
      if (message.delivery === 'sending') this.statusLine.append(strings.sending);
      else if (message.delivery === 'failed') {
        const retry = h('button', { type: 'button', class: 'link-btn' }, icon('retry'), strings.notSent);
        retry.addEventListener('click', () => this.ctx.actions.retry?.(message.id));
        this.statusLine.append(retry);
      }
      return;
    }
    const parts: Part[] =
      Array.isArray(message.parts) && message.parts.length > 0 ? message.parts : [{ type: 'text', text: message.text ?? '' }];
    this.parts!.set(parts, !message.streaming);
    const said = statusText(message.status, strings);
    if (this.statusLine.textContent !== (said ?? '')) this.statusLine.textContent = said ?? '';
    if (!message.streaming && !this.actions && message.author === 'agent') this.element.append((this.actions = this.buildActions()));
    this.markRating();
  }

  /** The answer's text (markdown, for copying). */
  get text(): string {
    return this.parts?.text ?? this.message.text;
  }

  /** The answer as read aloud: its rendered text. */
  get spoken(): string {
    return (this.parts?.element.innerText ?? this.message.text).replace(/\s+/g, ' ');
  }

  private buildActions(): HTMLElement {
    const { strings } = this.ctx;
    const copy = h('button', { type: 'button', class: 'icon-btn', 'aria-label': strings.copy, title: strings.copy }, icon('copy'));
    copy.addEventListener('click', () => void copyText(this.text, copy, strings.copied));
    const up = h(
      'button',
      { type: 'button', class: 'icon-btn', 'data-rating': 'up', 'aria-label': strings.good, title: strings.good, 'aria-pressed': 'false' },
      icon('up'),
    );
    const down = h(
      'button',
      { type: 'button', class: 'icon-btn', 'data-rating': 'down', 'aria-label': strings.bad, title: strings.bad, 'aria-pressed': 'false' },
      icon('down'),
    );
    const row = h('div', { class: 'actions' }, copy, up, down);
    const rate = (rating: 'up' | 'down') => {
      const next = this.message.feedback?.rating === rating ? null : rating;
      const before = this.message.feedback;
      this.message.feedback = { rating: next };
      this.markRating();
      this.element.querySelector('.comment')?.remove();
      if (next === 'down') this.openComment();
      this.ctx.actions.feedback?.(this.message.id, next).catch(() => {
        this.message.feedback = before;
        this.markRating();
      });
    };
    up.addEventListener('click', () => rate('up'));
    down.addEventListener('click', () => rate('down'));
    return row;
  }

  private openComment(): void {
    const { strings } = this.ctx;
    const box = h('textarea', { rows: 2, maxlength: 1000, 'aria-label': strings.comment, placeholder: strings.comment });
    const send = h('button', { type: 'submit', class: 'btn' }, strings.sendComment);
    const form = h('form', { class: 'comment' }, box, send);
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      const comment = box.value.trim();
      if (comment) void this.ctx.actions.feedback?.(this.message.id, 'down', comment).catch(() => {});
      form.replaceChildren(h('p', { class: 'muted', role: 'status' }, strings.thanks));
    });
    this.element.append(form);
    box.focus();
  }

  private markRating(): void {
    const rating = this.message.feedback?.rating ?? null;
    this.element.toggleAttribute('data-rated', rating !== null);
    for (const b of this.actions?.querySelectorAll('[data-rating]') ?? [])
      b.setAttribute('aria-pressed', String(b.getAttribute('data-rating') === rating));
  }
}

/** A stream's end status in words; nothing for a complete answer. */
export function statusText(status: string | undefined, strings: Strings): string | undefined {
  switch (status) {
    case 'cancelled':
      return strings.stopped;
    case 'interrupted':
      return strings.interrupted;
    case 'timeout':
      return strings.timeout;
    case 'error':
      return strings.error;
    default:
      return undefined;
  }
}
