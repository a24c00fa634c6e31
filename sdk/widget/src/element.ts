import { RelayChat, type RelayChatOptions } from '../../browser/src';
import { Composer } from './composer';
import { Conversation } from './conversation';
import { h } from './dom';
import { icon } from './icons';
import { fill, isRtl, STRINGS, type Strings } from './strings';
import { STYLES } from './styles';
import { tokenOption } from './token';
import type { Highlighter } from './transcript/code-block';
import type { DataRenderer } from './transcript/parts/types';
import { Transcript } from './transcript/transcript';

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
  private agentOnline = true;
  private highlighter: Promise<Highlighter> | undefined;
  /** The operator holding the conversation (docs/handoff.md), named in the header meanwhile. */
  private operator: string | undefined;
  private clock: ReturnType<typeof setInterval> | undefined;
  private readonly networkChanged = () => this.presence();
  /** Made once: what it keeps (history paged in, open streams) outlives each chat; a `strings` rebuild resets it with the views. */
  private readonly conversation = new Conversation({
    chat: () => this.chat,
    transcript: () => this.transcript,
    composer: () => this.composer,
    strings: () => this.labels,
    pageSize: () => Math.min(100, Math.max(1, Number(this.getAttribute('page-size')) || 30)),
    operator: (name) => {
      this.operator = name;
      this.decorate();
    },
    news: () => {
      if (!this.hasAttribute('open') && !this.inline) this.bump();
    },
  });

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
    window.removeEventListener('online', this.networkChanged);
    window.removeEventListener('offline', this.networkChanged);
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
    const conversation = this.conversation;
    const style = h('style', null, STYLES);
    this.transcript = new Transcript({
      strings: s,
      name: () => this.getAttribute('title') || s.title,
      renderers: this.renderers,
      highlighter: () => (this.highlighter ??= this.loadHighlighter()),
      actions: {
        feedback: (id, rating, comment) => conversation.feedback(id, rating, comment),
        retry: (id) => conversation.retry(id),
        loadEarlier: () => conversation.loadEarlier(),
        suggestions: (items) => this.showSuggestions(items),
      },
      decide: (messageId, approvalId, approved) => conversation.decide(messageId, approvalId, approved),
    });
    this.composer = new Composer(s, {
      send: (text) => conversation.send(text),
      stop: () => conversation.stop(),
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
    this.conversation.reset();
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
    chat.on('state', ({ state }) => {
      this.panel.setAttribute('data-state', state);
      if (state === 'connected') {
        this.everConnected = true;
        this.conversation.connected();
      }
      this.presence();
    });
    chat.on('agent:status', ({ online }) => {
      this.agentOnline = online;
      this.panel.setAttribute('data-online', String(online));
      this.presence();
    });
    this.conversation.attach(chat);
    window.addEventListener('online', this.networkChanged);
    window.addEventListener('offline', this.networkChanged);
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

  private bump(): void {
    this.unread++;
    this.badge.textContent = String(this.unread);
    this.badge.hidden = false;
    this.decorate();
  }

  private showSuggestions(items: { text: string; value?: string }[]): void {
    this.chips.hidden = items.length === 0;
    this.chips.replaceChildren(
      ...items.map((item) => {
        const b = h('button', { type: 'button', class: 'chip' }, item.text);
        b.addEventListener('click', () => {
          this.showSuggestions([]);
          this.conversation.send(typeof item.value === 'string' && item.value ? item.value : item.text);
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
