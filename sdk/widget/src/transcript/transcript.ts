import { h } from '../dom';
import { icon } from '../icons';
import { fill, type Strings } from '../strings';
import type { Highlighter } from './code-block';
import { MessageView, statusText, type MessageActions, type ViewMessage } from './message-view';
import { clock, locale } from './time';
import type { DataRenderer } from './parts/types';

export interface TranscriptOptions {
  strings: Strings;
  /** The bot's display name, for announcements. */
  name: () => string;
  actions: MessageActions & {
    loadEarlier?(): void;
    /** The suggestions of the newest answer changed (empty: none to show). */
    suggestions?(items: { text: string; value?: string }[]): void;
  };
  decide?: (messageId: string, approvalId: string, approved: boolean) => Promise<void>;
  renderers?: Map<string, DataRenderer>;
  highlighter?: () => Promise<Highlighter>;
}

/** Within this many pixels of the end, the reader counts as at the bottom and is followed. */
const BOTTOM_SLACK = 32;

/**
 * The transcript: messages in order, "Load earlier" at the top, the thinking indicator at the end,
 * a "Jump to latest" pill when the reader has scrolled up (it follows new content only from the
 * bottom), and a polite live region that announces finished answers, not every token. Used by the
 * widget and reusable by any page that shows a conversation (the operator console).
 */
export class Transcript {
  readonly element: HTMLElement;
  private readonly scroller: HTMLElement;
  private readonly list = h('div', { class: 'list' });
  private readonly greeting = h('div', { class: 'greeting', hidden: true });
  private readonly earlier: HTMLButtonElement;
  private readonly thinking: HTMLElement;
  private readonly jump: HTMLButtonElement;
  private readonly live = h('div', { class: 'sr-only', 'aria-live': 'polite' });
  private readonly views = new Map<string, MessageView>();
  private atBottom = true;
  private lastTop = 0;
  private scrollFrame = 0;
  private topTimer: ReturnType<typeof setTimeout> | undefined;
  private suggested = '';
  private readonly renderers: Map<string, DataRenderer>;

  constructor(private readonly opts: TranscriptOptions) {
    const { strings } = opts;
    this.renderers = opts.renderers ?? new Map<string, DataRenderer>();
    this.earlier = h('button', { type: 'button', class: 'btn earlier', hidden: true }, strings.loadEarlier);
    this.earlier.addEventListener('click', () => opts.actions.loadEarlier?.());
    this.thinking = h(
      'div',
      { class: 'thinking', role: 'status', hidden: true },
      h('span', { class: 'dots', 'aria-hidden': 'true' }, h('i'), h('i'), h('i')),
      h('span', { class: 'label' }),
    );
    this.scroller = h(
      'div',
      { class: 'scroller', part: 'transcript', tabindex: 0, role: 'region', 'aria-label': strings.log },
      this.earlier,
      this.list,
      this.thinking,
    );
    this.jump = h('button', { type: 'button', class: 'jump', hidden: true }, icon('arrowDown'), strings.jump);
    this.jump.addEventListener('click', () => this.scrollToEnd(true));
    this.scroller.addEventListener('scroll', () => {
      this.atBottom = this.scroller.scrollHeight - this.scroller.scrollTop - this.scroller.clientHeight <= BOTTOM_SLACK;
      if (this.atBottom) this.jump.hidden = true;
      // Scrolled up to the top with more history to show: load it, as "Load earlier" does (only when
      // the reader scrolled up, not when the transcript moved itself).
      // It waits for the scroll to settle there, so a click on "Load earlier" that scrolled the
      // button into view loads one page, not two.
      const top = this.scroller.scrollTop;
      if (top < this.lastTop && top < 8 && !this.earlier.hidden) {
        clearTimeout(this.topTimer);
        this.topTimer = setTimeout(() => {
          if (this.scroller.scrollTop < 8 && !this.earlier.hidden) opts.actions.loadEarlier?.();
        }, 150);
      }
      this.lastTop = top;
    });
    this.element = h('div', { class: 'transcript' }, this.scroller, this.jump, this.live);
  }

  /** Shows the bot's greeting above the conversation (plain text), or none. */
  greet(text: string | null): void {
    this.greeting.hidden = !text;
    this.greeting.textContent = text ?? '';
  }

  /** Adds a message at the end, or updates it in place when its id is shown. */
  upsert(message: ViewMessage): void {
    this.follow(() => {
      const view = this.views.get(message.id);
      if (view) {
        const ts = view.message.ts;
        view.update({ ...view.message, ...message });
        if (view.message.ts !== ts) this.stamp();
      } else {
        const el = this.create(message).element;
        this.list.append(el);
        this.stamp(el);
      }
      this.newest();
    });
  }

  /**
   * Changes a shown message's id (a user's message once the hub acknowledged it). When a copy with
   * that id is shown already (history loaded between the send and its ack), the copy goes: this one
   * stands where the user wrote it.
   */
  rename(from: string, to: string): void {
    const view = this.views.get(from);
    if (!view) return;
    this.views.get(to)?.element.remove();
    this.views.delete(from);
    this.views.set(to, view);
    view.message.id = to;
    view.element.setAttribute('data-id', to);
  }

  /**
   * Shows a page of history (oldest first) among the shown messages: each in its place by time (the
   * hub's timestamps), shown ones updated, so a page loaded after a gap fills in where it belongs.
   */
  merge(messages: ViewMessage[], hasMore: boolean): void {
    this.follow(() => {
      for (const m of messages) {
        const shown = this.views.get(m.id);
        if (shown) {
          shown.update({ ...shown.message, ...m });
          continue;
        }
        const el = this.create(m).element;
        // After the last shown message at or before it; messages without a time (not sent yet) are newest.
        let after: Element | null = null;
        for (let node = this.list.lastElementChild; node; node = node.previousElementSibling) {
          const ts = this.views.get(node.getAttribute('data-id') ?? '')?.message.ts;
          if (ts !== undefined && m.ts !== undefined && ts <= m.ts) {
            after = node;
            break;
          }
        }
        this.list.insertBefore(el, after ? after.nextSibling : this.list.firstChild);
      }
      this.earlier.hidden = !hasMore;
      this.stamp();
      this.newest();
    });
  }

  /** The message shown with this id. */
  get(id: string): ViewMessage | undefined {
    return this.views.get(id)?.message;
  }

  /** Adds older messages (oldest first) above the shown ones, keeping the reader's place. */
  prepend(messages: ViewMessage[], hasMore: boolean): void {
    const before = this.scroller.scrollHeight - this.scroller.scrollTop;
    const nodes = messages.filter((m) => !this.views.has(m.id)).map((m) => this.create(m).element);
    this.list.prepend(...nodes);
    this.stamp();
    this.earlier.hidden = !hasMore;
    if (this.atBottom) this.scrollToEnd(false);
    else this.scroller.scrollTop = this.scroller.scrollHeight - before;
    this.newest();
  }

  /** Announces a finished answer to screen readers (politely, once). */
  announce(message: ViewMessage): void {
    const view = this.views.get(message.id);
    const text = (view?.spoken ?? message.text).trim();
    const said = statusText(message.status, this.opts.strings);
    this.live.textContent = fill(this.opts.strings.answered, {
      name: this.opts.name(),
      text: [text.slice(0, 600), said].filter(Boolean).join(' — '),
    });
  }

  /** Shows or hides "thinking" with the bot's activity label. */
  setThinking(label: string | undefined): void {
    this.follow(() => {
      this.thinking.hidden = label === undefined;
      const el = this.thinking.lastElementChild!;
      if (label !== undefined && el.textContent !== label) el.textContent = label;
    });
  }

  /**
   * Puts a day separator where the day changes between messages, and under each message its time
   * ("now", "5 min. ago", else the time of day; the exact date and time on hover), in the panel's
   * language through `Intl`. Runs when messages are added or get their time, and each minute; `only`
   * a message just added at the end.
   */
  stamp(only?: Element): void {
    const says = clock(locale(this.element));
    const now = new Date();
    const when = (el: Element | null) => {
      const ts = this.views.get(el?.getAttribute('data-id') ?? '')?.message.ts;
      return ts && !isNaN(Date.parse(ts)) ? new Date(ts) : now;
    };
    const prev = only?.previousElementSibling;
    let day = prev ? when(prev).toDateString() : '';
    for (const el of only ? [only] : [...this.list.children]) {
      const view = this.views.get(el.getAttribute('data-id') ?? '');
      if (!view) {
        el.remove(); // a separator: put back below where one belongs
        continue;
      }
      const { ts, author } = view.message;
      const at = when(el);
      if (at.toDateString() !== day) {
        day = at.toDateString();
        el.before(h('p', { class: 'day' }, says.day(at, now)));
      }
      if (author === 'system' || at === now) continue;
      let time = el.querySelector(':scope>time');
      if (!time) el.insertBefore((time = h('time')), el.querySelector(':scope>.actions'));
      time.setAttribute('datetime', ts!);
      time.setAttribute('title', says.exact(at));
      const text = says.ago(at, now);
      if (time.textContent !== text) time.textContent = text;
    }
  }

  /** Scrolls to the newest message. */
  scrollToEnd(smooth: boolean): void {
    this.scroller.scrollTo({ top: this.scroller.scrollHeight, behavior: smooth ? 'smooth' : 'instant' });
    this.atBottom = true;
    this.jump.hidden = true;
  }

  private create(message: ViewMessage): MessageView {
    const decide = this.opts.decide;
    const view: MessageView = new MessageView(message, {
      strings: this.opts.strings,
      renderers: this.renderers,
      highlighter: this.opts.highlighter,
      actions: this.opts.actions,
      decide: decide ? (approvalId: string, approved: boolean) => decide(view.message.id, approvalId, approved) : undefined,
    });
    this.views.set(message.id, view);
    return view;
  }

  /** Runs a change, then follows the end if the reader was there, else offers "Jump to latest". */
  private follow(change: () => void): void {
    const was = this.atBottom;
    change();
    if (!was) {
      this.jump.hidden = false;
      return;
    }
    // Once per frame, after the growing block rendered (its frame callback was asked for first):
    // reading the height at every delta would force a layout per delta.
    if (this.scrollFrame) return;
    this.scrollFrame = requestAnimationFrame(() => {
      this.scrollFrame = 0;
      if (this.atBottom) this.scroller.scrollTop = this.scroller.scrollHeight;
    });
  }

  private newest(): void {
    const last = this.list.lastElementChild;
    const view = last ? this.views.get(last.getAttribute('data-id') ?? '') : undefined;
    const items = view && view.message.author !== 'user' ? view.suggestions : [];
    const key = JSON.stringify(items);
    if (key === this.suggested) return;
    this.suggested = key;
    this.opts.actions.suggestions?.(items);
  }
}
