import { RelayChat, type ClientInboundMessage, type MessageEnd, type RelayChatOptions, type StreamingMessage } from '../../browser/src';
import { Composer } from './composer';
import { h } from './dom';
import { icon } from './icons';
import { fill, isRtl, STRINGS, type Strings } from './strings';
import { STYLES } from './styles';
import { tokenOption } from './token';
import type { Highlighter } from './transcript/code-block';
import type { ViewMessage } from './transcript/message-view';
import type { DataRenderer, Part } from './transcript/parts/types';
import { Transcript } from './transcript/transcript';

/** The browser SDK's `approve` (answers in parts), present once the SDK has it: feature-detected. */
type Approver = { approve?: (messageId: string, approvalId: string, approved: boolean, reason?: string) => Promise<unknown> };
type Inbound = Omit<ClientInboundMessage | StreamingMessage | MessageEnd, 'status' | 'author'> & {
  author: string;
  parts?: Part[];
  streaming?: boolean;
  status?: string;
  feedback?: ClientInboundMessage['feedback'];
  /** On `system` messages, the state entered; on those and `operator` ones, who (docs/handoff.md). */
  control?: string;
  operator?: { name: string };
};

/** The attributes it reads (docs/widget.md); the script tag copies each from its `data-*` twin. */
const ATTRS = [
  'agent-id',
  'url',
  'path',
  'page-size',
  'token',
  'token-url',
  'mode',
  'title',
  'avatar',
  'greeting',
  'theme',
  'position',
  'lang',
  'dir',
  'open',
] as const;

/**
 * `<relay-chat>`: the chat widget (docs/widget.md). A launcher with a panel, or inline with
 * `mode="inline"`; everything inside a shadow root, so the page's CSS cannot reach it and its CSS
 * never leaks out. It talks to the hub only through the browser SDK's public API.
 *
 * @example
 * <relay-chat agent-id="support-bot" token-url="/chat-token" title="Support"></relay-chat>
 */
export class RelayChatElement extends HTMLElement {
  static observedAttributes = [...ATTRS];
  /** The hub's origin when no `url` attribute is set: where the widget's script came from. */
  static defaultUrl: string | undefined;

  /** A function returning a token (or a promise of one), called before every connect. */
  getToken: (() => string | Promise<string>) | undefined;
  /** More options of the browser SDK's `RelayChat` (backoff, persist, …); set before the element connects. */
  chatOptions: Partial<RelayChatOptions> = {};
  /**
   * The browser SDK's `RelayChat` this element talks through (undefined until it connects): read it
   * for its events or `history()`; the element owns it and closes it when removed.
   */
  chat: RelayChat | undefined;
  private readonly root: ShadowRoot;
  private built = false;
  private labels: Strings = STRINGS;
  /**
   * The transcript this element shows. A page may feed it messages itself (a preview, a test):
   * `upsert({ id, author: 'agent', text, parts })`.
   */
  transcript!: Transcript;
  private composer!: Composer;
  private panel!: HTMLElement;
  private launcher!: HTMLButtonElement;
  private badge!: HTMLElement;
  private statusLine!: HTMLElement;
  private banner!: HTMLElement;
  private chips!: HTMLElement;
  private titleEl!: HTMLElement;
  private avatarEl!: HTMLElement;
  private readonly renderers = new Map<string, DataRenderer>();
  private unread = 0;
  private everConnected = false;
  private historyLoaded = false;
  private oldestId: string | undefined;
  private agentOnline = true;
  /** Streams open now, and whether each has shown content yet. */
  private readonly open = new Map<string, boolean>();
  private waiting = false;
  private loadingEarlier = false;
  private localSeq = 0;
  private highlighter: Promise<Highlighter> | undefined;
  /** The operator holding the conversation (docs/handoff.md), named in the header meanwhile. */
  private operator: string | undefined;
  /**
   * Lines of changes of control shown live (they have no hub id), oldest first: the hub's own line,
   * when a replay or a page of history brings it, takes the place of the first one with its words.
   */
  private lines: string[] = [];
  private clock: ReturnType<typeof setInterval> | undefined;
  /** This user's id at the hub (the session's `clientId`): approvals it decided read "by you". */
  private me: string | undefined;

  constructor() {
    super();
    this.root = this.attachShadow({ mode: 'open' });
  }

  get strings(): Partial<Strings> {
    return this.labels;
  }

  /** Replaces some of the widget's strings (docs/widget.md, "Strings and languages"). */
  set strings(value: Partial<Strings>) {
    this.labels = { ...STRINGS, ...value };
    if (this.built) this.rebuild();
  }

  /** Registers how `data` parts named `name` are shown: a function returning a node. */
  registerRenderer(name: string, renderer: DataRenderer): void {
    this.renderers.set(name, renderer);
  }

  /** The token, as a property (same as the `token` attribute). */
  set token(value: string | null) {
    if (value === null) this.removeAttribute('token');
    else this.setAttribute('token', value);
  }

  get token(): string | null {
    return this.getAttribute('token');
  }

  /** Opens the panel (launcher mode) and moves focus into the composer. */
  show(): void {
    this.setAttribute('open', '');
  }

  /** Closes the panel and returns focus to the launcher. */
  hide(): void {
    this.removeAttribute('open');
  }

  connectedCallback(): void {
    if (!this.built) this.build();
    this.connect();
    this.clock ??= setInterval(() => this.transcript.stamp(), 60_000);
  }

  disconnectedCallback(): void {
    clearInterval(this.clock);
    this.clock = undefined;
    this.chat?.close();
    this.chat = undefined;
  }

  attributeChangedCallback(name: string, before: string | null, after: string | null): void {
    if (!this.built || before === after) return;
    if (name === 'open') this.openChanged(after !== null);
    else if (['agent-id', 'url', 'path', 'token', 'token-url'].includes(name)) {
      this.disconnectedCallback();
      this.connect();
    } else this.decorate();
  }

  private get inline(): boolean {
    return this.getAttribute('mode') === 'inline';
  }

  private build(): void {
    this.built = true;
    const s = this.labels;
    const style = h('style', null, STYLES);
    this.transcript = new Transcript({
      strings: s,
      name: () => this.getAttribute('title') || s.title,
      renderers: this.renderers,
      highlighter: () => (this.highlighter ??= this.loadHighlighter()),
      actions: {
        feedback: (id, rating, comment) => (this.chat ? this.chat.feedback(id, rating, comment) : Promise.reject(new Error(s.error))),
        retry: (id) => this.retry(id),
        loadEarlier: () => {
          if (this.loadingEarlier) return;
          this.loadingEarlier = true;
          void this.loadHistory(true).finally(() => (this.loadingEarlier = false));
        },
        suggestions: (items) => this.showSuggestions(items),
      },
      decide: (messageId, approvalId, approved) => {
        const chat = this.chat as unknown as Approver | undefined;
        if (typeof chat?.approve !== 'function') return Promise.reject(new Error(s.error));
        return chat.approve(messageId, approvalId, approved).then(() => {});
      },
    });
    this.composer = new Composer(s, {
      send: (text) => this.send(text),
      stop: () => void this.chat?.stop().catch(() => {}),
    });
    this.titleEl = h('h2', { class: 'title', id: 'title' });
    this.avatarEl = h('span', { class: 'avatar', 'aria-hidden': 'true' });
    this.statusLine = h('p', { class: 'presence' });
    const close = h('button', { type: 'button', class: 'icon-btn close', 'aria-label': s.close, title: s.close }, icon('close'));
    close.addEventListener('click', () => this.hide());
    const header = h(
      'header',
      { part: 'header' },
      this.avatarEl,
      h('div', { class: 'who' }, this.titleEl, this.statusLine),
      this.inline ? null : close,
    );
    this.banner = h('p', { class: 'banner', role: 'status', hidden: true });
    this.chips = h('div', { class: 'chips', role: 'group', 'aria-label': s.suggestions, hidden: true });
    this.panel = h(
      'section',
      { class: 'panel', part: 'panel', role: this.inline ? 'region' : 'dialog', 'aria-labelledby': 'title' },
      header,
      this.banner,
      this.transcript.element,
      this.chips,
      this.composer.element,
    );
    this.badge = h('span', { class: 'badge', hidden: true });
    this.launcher = h(
      'button',
      { type: 'button', class: 'launcher', part: 'launcher', 'aria-expanded': 'false' },
      icon('chat'),
      this.badge,
    );
    this.launcher.addEventListener('click', () => (this.hasAttribute('open') ? this.hide() : this.show()));
    this.panel.addEventListener('keydown', (e) => {
      if (e.key === 'Escape' && !this.inline) {
        e.stopPropagation();
        this.hide();
      }
    });
    this.root.replaceChildren(style, this.panel, this.inline ? '' : this.launcher);
    this.decorate();
    this.openChanged(this.hasAttribute('open'), false);
  }

  /** Applies the attributes that only change looks: title, avatar, theme, direction, greeting. */
  private decorate(): void {
    const s = this.labels;
    const title = this.operator || this.getAttribute('title') || s.title;
    this.titleEl.textContent = title;
    this.transcript.greet(this.getAttribute('greeting'));
    const avatar = this.getAttribute('avatar');
    this.avatarEl.replaceChildren(
      avatar && /^https?:|^\//.test(avatar) ? h('img', { src: avatar, alt: '' }) : title.trim().slice(0, 1).toUpperCase(),
    );
    this.launcher.title = title;
    this.launcher.setAttribute('aria-label', this.unread > 0 ? `${s.open} — ${fill(s.unread, { n: this.unread })}` : s.open);
    const lang = this.getAttribute('lang');
    const dir = this.getAttribute('dir') ?? (isRtl(lang) ? 'rtl' : 'ltr');
    this.panel.setAttribute('dir', dir);
    this.panel.setAttribute('lang', lang ?? document.documentElement.lang ?? 'en');
    this.transcript.stamp();
  }

  private rebuild(): void {
    this.built = false;
    this.build();
    this.chat?.close();
    this.chat = undefined;
    this.connect();
  }

  private openChanged(open: boolean, focus = true): void {
    this.panel.hidden = !open && !this.inline;
    this.launcher.setAttribute('aria-expanded', String(open));
    this.launcher.replaceChildren(icon(open ? 'close' : 'chat'), this.badge);
    if (open) {
      this.unread = 0;
      this.badge.hidden = true;
      this.decorate();
      this.transcript.scrollToEnd(false);
      if (focus) this.composer.focus();
    } else if (focus && !this.inline) this.launcher.focus();
  }

  private connect(): void {
    if (this.chat) return;
    const agentId = this.getAttribute('agent-id');
    const url = this.getAttribute('url') ?? RelayChatElement.defaultUrl;
    const token = tokenOption({ getToken: this.getToken, token: this.getAttribute('token'), tokenUrl: this.getAttribute('token-url') });
    if (!agentId || !url || !token) return;
    let chat: RelayChat;
    try {
      chat = new RelayChat({ ...this.chatOptions, url, agentId, token, path: this.getAttribute('path') ?? this.chatOptions.path });
    } catch (e) {
      this.statusLine.textContent = e instanceof Error ? e.message : String(e);
      return;
    }
    this.chat = chat;
    this.statusLine.textContent = this.labels.connecting;
    this.everConnected = false;
    this.historyLoaded = false;
    chat.on('state', ({ state }) => {
      this.panel.setAttribute('data-state', state);
      if (state === 'connected') {
        this.everConnected = true;
        if (!this.historyLoaded) void this.loadHistory(false);
      }
      this.presence();
    });
    chat.on('agent:status', ({ online }) => {
      this.agentOnline = online;
      this.panel.setAttribute('data-online', String(online));
      this.presence();
    });
    chat.on('session', (info) => (this.me = info.clientId));
    chat.on('gap', () => void this.loadHistory(false));
    chat.on('message', (m) => this.inbound(m as Inbound));
    chat.on('message:update', (u) =>
      this.inbound({ ...(this.transcript.get(u.id) as Inbound), ...(u as Partial<Inbound>), streaming: true }),
    );
    chat.on('message:end', (m) => this.inbound({ ...m, streaming: false }));
    chat.on('control', (c) => {
      // The hub logs the change too (history shows it); live, only this event says so.
      this.controlled(c);
      if (c.control === 'waiting') return;
      const id = `local-${++this.localSeq}`;
      this.inbound({ ...c, id, author: 'system', text: '' } as Inbound);
      this.lines.push(id);
    });
    chat.on('activity', (a) => {
      this.waiting = a.state !== 'idle' && ![...this.open.values()].some(Boolean);
      this.thinking(a.state === 'idle' ? undefined : a.label || this.labels.thinking);
    });
    window.addEventListener('online', () => this.presence());
    window.addEventListener('offline', () => this.presence());
  }

  private presence(): void {
    const s = this.labels;
    const state = this.chat?.state ?? 'disconnected';
    const offline = !navigator.onLine || (state === 'connecting' && this.everConnected);
    this.banner.hidden = !offline;
    this.banner.textContent = s.offline;
    this.statusLine.textContent = offline
      ? s.offline
      : state === 'connecting'
        ? s.connecting
        : state === 'disconnected'
          ? s.ended
          : this.agentOnline
            ? s.online
            : s.away;
    this.panel.toggleAttribute('data-offline', offline);
  }

  private async loadHistory(earlier: boolean): Promise<void> {
    const chat = this.chat;
    if (!chat) return;
    try {
      const limit = Math.min(100, Math.max(1, Number(this.getAttribute('page-size')) || 30));
      const page = await chat.history(earlier && this.oldestId ? { before: this.oldestId, limit } : { limit });
      this.historyLoaded = true;
      if (page.messages.length > 0 && (earlier || !this.oldestId)) this.oldestId = page.messages[0].id;
      const views = page.messages.map((m) => this.adopt(toView(m as Inbound, this.labels, this.me)));
      const line = page.messages.filter((m) => m.author === 'system').pop();
      if (line && !earlier) this.controlled(line as Inbound);
      if (earlier) this.transcript.prepend(views, page.hasMore);
      else {
        this.transcript.merge(views, page.hasMore);
        for (const v of views) if (v.streaming) this.track(v);
      }
    } catch {
      // Offline or refused: the transcript keeps what it shows; the next connect tries again.
    }
  }

  /** Who answers now: the header names the operator while one holds the conversation. */
  private controlled(c: Pick<Inbound, 'control' | 'operator'>): void {
    this.operator = c.control === 'human' ? c.operator?.name : undefined;
    this.decorate();
  }

  private inbound(m: Inbound): void {
    if (m.author === 'system') this.controlled(m);
    const view = this.adopt(toView(m, this.labels, this.me));
    const known = this.transcript.get(view.id);
    this.transcript.upsert(view);
    this.track(view);
    // News once finished: a message new to this tab, or a stream that just ended.
    if (m.author !== 'user' && !view.streaming && (known?.streaming || !known)) {
      this.transcript.announce(view);
      if (!this.hasAttribute('open') && !this.inline) this.bump();
    }
  }

  /** The hub's line of a change of control shown live already: the live line takes its id. */
  private adopt(view: ViewMessage): ViewMessage {
    if (view.author === 'system' && !this.transcript.get(view.id)) {
      const i = this.lines.findIndex((id) => this.transcript.get(id)?.text === view.text);
      if (i >= 0) this.transcript.rename(this.lines.splice(i, 1)[0], view.id);
    }
    return view;
  }

  /** Keeps "thinking" until an answer shows content, and Stop while one streams. */
  private track(view: ViewMessage): void {
    if (view.author === 'user') return;
    const visible = view.text.length > 0 || (view.parts?.length ?? 0) > 0;
    if (view.streaming) this.open.set(view.id, visible);
    else this.open.delete(view.id);
    if (visible || !view.streaming) {
      this.waiting = false;
      this.thinking(undefined);
    } else this.thinking(this.labels.thinking);
    this.composer.busy(this.open.size > 0 || this.waiting);
  }

  private thinking(label: string | undefined): void {
    const showing = [...this.open.values()].some(Boolean);
    this.transcript.setThinking(showing ? undefined : label);
    if (label !== undefined && !showing) this.waiting = true;
    this.composer.busy(this.open.size > 0 || this.waiting);
  }

  private bump(): void {
    this.unread++;
    this.badge.textContent = String(this.unread);
    this.badge.hidden = false;
    this.decorate();
  }

  private send(text: string): void {
    const id = `local-${++this.localSeq}`;
    this.transcript.upsert({ id, author: 'user', text, delivery: 'sending' });
    this.deliver(id, text);
  }

  private deliver(id: string, text: string): void {
    const chat = this.chat;
    if (!chat) {
      this.transcript.upsert({ id, author: 'user', text, delivery: 'failed' });
      return;
    }
    chat.send(text).then(
      (ack) => {
        this.transcript.upsert({ id, author: 'user', text, delivery: undefined, ts: ack.ts });
        this.transcript.rename(id, ack.id);
      },
      () => this.transcript.upsert({ id, author: 'user', text, delivery: 'failed' }),
    );
  }

  private retry(id: string): void {
    const m = this.transcript.get(id);
    if (!m) return;
    this.transcript.upsert({ ...m, delivery: 'sending' });
    this.deliver(id, m.text);
  }

  private showSuggestions(items: { text: string; value?: string }[]): void {
    this.chips.hidden = items.length === 0;
    this.chips.replaceChildren(
      ...items.map((item) => {
        const b = h('button', { type: 'button', class: 'chip' }, item.text);
        b.addEventListener('click', () => {
          this.showSuggestions([]);
          this.send(typeof item.value === 'string' && item.value ? item.value : item.text);
        });
        return b;
      }),
    );
  }

  private loadHighlighter(): Promise<Highlighter> {
    const base = this.getAttribute('url') ?? RelayChatElement.defaultUrl ?? location.origin;
    const url = `${base.replace(/\/+$/, '')}/sdk/widget-highlight.mjs`;
    return import(/* @vite-ignore */ url) as Promise<Highlighter>;
  }
}

/** A message of the SDK as the transcript shows it. */
function toView(m: Inbound, s: Strings, me: string | undefined): ViewMessage {
  const name = m.operator?.name;
  return {
    id: m.id,
    author: m.author,
    name,
    // A change of control in the widget's language; a state it has no words for keeps the hub's.
    text:
      (m.author === 'system' && (m.control === 'human' ? fill(s.joined, { name: name ?? '' }) : m.control === 'bot' && s.back)) ||
      m.text ||
      '',
    ts: m.ts,
    // The hub names who decided an approval by their id: this user's own decisions read "by you".
    parts: Array.isArray(m.parts)
      ? m.parts.map((p) =>
          me && p?.type === 'tool' && p.approval?.decidedBy === me ? { ...p, approval: { ...p.approval, decidedBy: 'user' } } : p,
        )
      : undefined,
    streaming: m.streaming === true,
    status: m.status && m.status !== 'complete' ? m.status : undefined,
    feedback: m.feedback ? { rating: m.feedback.rating } : undefined,
  };
}
