import type { RelayChat } from '../../browser/src';
import type { Composer } from './composer';
import { toView, type Inbound } from './inbound';
import type { Strings } from './strings';
import type { ViewMessage } from './transcript/message-view';
import type { Transcript } from './transcript/transcript';

/**
 * What the conversation needs of the element that shows it. Read at each use: the element replaces
 * its chat on every connect, and its transcript and composer when its strings change.
 */
export interface ConversationHost {
  chat(): RelayChat | undefined;
  transcript(): Transcript;
  composer(): Composer;
  strings(): Strings;
  /** Messages per page of history (the `page-size` attribute). */
  pageSize(): number;
  /** The operator now holding the conversation, or undefined for the bot (docs/handoff.md). */
  operator(name: string | undefined): void;
  /** A finished answer arrived: a message new to this tab, or a stream that just ended. */
  news(): void;
}

/**
 * The conversation between the chat and the transcript: messages, streams and changes of control
 * shown as they come, history paged in on connect, after a gap and on "Load earlier", the user's
 * messages sent and retried, and "thinking" and Stop kept in step with the answers.
 */
export class Conversation {
  private historyLoaded = false;
  private oldestId: string | undefined;
  /** Streams open now, and whether each has shown content yet. */
  private readonly open = new Map<string, boolean>();
  private waiting = false;
  private loadingEarlier = false;
  private localSeq = 0;
  /**
   * Lines of changes of control shown live (they have no hub id), oldest first: the hub's own line,
   * when a replay or a page of history brings it, takes the place of the first one with its words.
   */
  private readonly lines: string[] = [];
  /** This user's id at the hub (the session's `clientId`): approvals it decided read "by you". */
  private me: string | undefined;

  constructor(private readonly host: ConversationHost) {}

  /** Listens to a new chat; its history loads once it connects ({@link connected}). */
  attach(chat: RelayChat): void {
    this.historyLoaded = false;
    chat.on('session', (info) => (this.me = info.clientId));
    chat.on('gap', () => void this.loadHistory(false));
    chat.on('message', (m) => this.inbound(m as Inbound));
    chat.on('message:update', (u) =>
      this.inbound({ ...(this.host.transcript().get(u.id) as Inbound), ...(u as Partial<Inbound>), streaming: true }),
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
      this.waiting = a.state !== 'idle' && !this.showing();
      this.thinking(a.state === 'idle' ? undefined : a.label || this.host.strings().thinking);
    });
  }

  /**
   * The element replaced its transcript (new strings): what was shown is gone, so paging starts
   * again from the newest page, and streams and lines come back with the next chat's session.
   */
  reset(): void {
    this.oldestId = undefined;
    this.open.clear();
    this.waiting = false;
    this.lines.length = 0;
  }

  /** The chat connected: the newest page of history, once per chat. */
  connected(): void {
    if (!this.historyLoaded) void this.loadHistory(false);
  }

  /** "Load earlier" (or a scroll to the top): the page before the oldest message shown. */
  loadEarlier(): void {
    if (this.loadingEarlier) return;
    this.loadingEarlier = true;
    void this.loadHistory(true).finally(() => (this.loadingEarlier = false));
  }

  send(text: string): void {
    const id = `local-${++this.localSeq}`;
    this.host.transcript().upsert({ id, author: 'user', text, delivery: 'sending' });
    this.deliver(id, text);
  }

  retry(id: string): void {
    const transcript = this.host.transcript();
    const m = transcript.get(id);
    if (!m) return;
    transcript.upsert({ ...m, delivery: 'sending' });
    this.deliver(id, m.text);
  }

  stop(): void {
    const chat = this.host.chat();
    void chat?.stop().catch(() => {});
  }

  feedback(id: string, rating: 'up' | 'down' | null, comment?: string): Promise<void> {
    const chat = this.host.chat();
    return chat ? chat.feedback(id, rating, comment) : Promise.reject(new Error(this.host.strings().error));
  }

  /** Approves or denies a tool call the bot asked about (docs/widget.md). */
  decide(messageId: string, approvalId: string, approved: boolean): Promise<void> {
    const chat = this.host.chat();
    return chat ? chat.approve(messageId, approvalId, approved).then(() => {}) : Promise.reject(new Error(this.host.strings().error));
  }

  private async loadHistory(earlier: boolean): Promise<void> {
    const chat = this.host.chat();
    if (!chat) return;
    try {
      const limit = this.host.pageSize();
      const page = await chat.history(earlier && this.oldestId ? { before: this.oldestId, limit } : { limit });
      this.historyLoaded = true;
      if (page.messages.length > 0 && (earlier || !this.oldestId)) this.oldestId = page.messages[0].id;
      const views = page.messages.map((m) => this.adopt(toView(m as Inbound, this.host.strings(), this.me)));
      const line = page.messages.filter((m) => m.author === 'system').pop();
      if (line && !earlier) this.controlled(line as Inbound);
      const transcript = this.host.transcript();
      if (earlier) transcript.prepend(views, page.hasMore);
      else {
        transcript.merge(views, page.hasMore);
        for (const v of views) if (v.streaming) this.track(v);
      }
    } catch {
      // Offline or refused: the transcript keeps what it shows; the next connect tries again.
    }
  }

  /** Who answers now: the header names the operator while one holds the conversation. */
  private controlled(c: Pick<Inbound, 'control' | 'operator'>): void {
    this.host.operator(c.control === 'human' ? c.operator?.name : undefined);
  }

  private inbound(m: Inbound): void {
    if (m.author === 'system') this.controlled(m);
    const transcript = this.host.transcript();
    const view = this.adopt(toView(m, this.host.strings(), this.me));
    const known = transcript.get(view.id);
    transcript.upsert(view);
    this.track(view);
    // News once finished: a message new to this tab, or a stream that just ended.
    if (m.author !== 'user' && !view.streaming && (known?.streaming || !known)) {
      transcript.announce(view);
      this.host.news();
    }
  }

  /** The hub's line of a change of control shown live already: the live line takes its id. */
  private adopt(view: ViewMessage): ViewMessage {
    const transcript = this.host.transcript();
    if (view.author === 'system' && !transcript.get(view.id)) {
      const i = this.lines.findIndex((id) => transcript.get(id)?.text === view.text);
      if (i >= 0) transcript.rename(this.lines.splice(i, 1)[0], view.id);
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
    } else this.thinking(this.host.strings().thinking);
  }

  /** Shows "thinking" (`label`) unless an answer already shows content; Stop while one streams or is awaited. */
  private thinking(label: string | undefined): void {
    const showing = this.showing();
    this.host.transcript().setThinking(showing ? undefined : label);
    if (label !== undefined && !showing) this.waiting = true;
    this.host.composer().busy(this.open.size > 0 || this.waiting);
  }

  /** Whether an open stream shows content already. */
  private showing(): boolean {
    return [...this.open.values()].some(Boolean);
  }

  private deliver(id: string, text: string): void {
    const chat = this.host.chat();
    if (!chat) {
      this.host.transcript().upsert({ id, author: 'user', text, delivery: 'failed' });
      return;
    }
    chat.send(text).then(
      (ack) => {
        this.host.transcript().upsert({ id, author: 'user', text, delivery: undefined, ts: ack.ts });
        this.host.transcript().rename(id, ack.id);
      },
      () => this.host.transcript().upsert({ id, author: 'user', text, delivery: 'failed' }),
    );
  }
}
