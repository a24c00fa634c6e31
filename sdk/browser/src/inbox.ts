import type { Socket } from 'socket.io-client';
import {
  ClientEvents as Events,
  type ClientInboundMessage,
  type ClientToHubEvents,
  type HubToClientEvents,
  type MessageEnd,
} from '../../../src/protocol';
import type { RelayChatEvents } from './chat-events';
import type { HistoryPage } from './history';
import type { Outbox } from './outbox';
import type { RelayChatOptions } from './options';
import { RecentIds } from './recent-ids';
import { ResumePoint } from './resume-point';
import { OpenStreams } from './streams';

type ClientSocket = Socket<HubToClientEvents, ClientToHubEvents>;

/** Where a connection's replay stands: messages before the hub's `session` are the replay. */
export interface Replay {
  /** Whether the hub's `session` came. */
  inSession?: boolean;
  /** The first message of the replay (its oldest). */
  replayedFrom?: string;
}

/**
 * The conversation as a RelayChat hands it to the page, whichever way it comes (live, replayed
 * after a reconnect, paged in): each message once, and streams as they start, change and end. It
 * keeps the resume point, the newest message the page has, which the next connect resumes from.
 */
export class Inbox {
  readonly seen: RecentIds;
  /**
   * Streams whose end the page has been handed: a `message:start` for one of them is stale (a hub
   * must not announce an ended stream, but an older one could) and never starts it again.
   */
  private readonly ended: RecentIds;
  readonly streams = new OpenStreams();
  readonly resume: ResumePoint;
  /** The `clientMessageId` of the user's newest message: what `stop()` names before a stream exists. */
  lastClientMessageId: string | undefined;
  /** Whether the socket followed has handed the app a message (see {@link paged}). */
  private deliveredOnSocket = false;

  constructor(
    private readonly emit: <K extends keyof RelayChatEvents>(event: K, payload: RelayChatEvents[K]) => void,
    private readonly outbox: Outbox,
    options: RelayChatOptions,
    /** The fixed part of the conversation's resume point: hub endpoint and bot. */
    scope: string[],
  ) {
    this.seen = new RecentIds(options.dedupeLimit);
    this.ended = new RecentIds(options.dedupeLimit);
    this.resume = new ResumePoint(scope, options.persist ?? true, (e) => emit('error', e));
  }

  /**
   * The conversation on a socket: messages (replayed first), streams, activity, who answers.
   * @internal Left out of the published types, which then need no socket.io-client types.
   */
  follow(socket: ClientSocket, replay: Replay): void {
    this.deliveredOnSocket = false;
    socket.on(Events.message, (message) => {
      if (!replay.inSession && typeof message?.id === 'string') replay.replayedFrom ??= message.id;
      this.receive(message, true);
    });
    socket.on(Events.messageStart, (m) => {
      if (typeof m?.id !== 'string' || this.ended.has(m.id)) return;
      if (this.streams.start(m)) this.emit('message', { ...m, streaming: true });
      else this.emit('message:update', { ...m });
    });
    const change = (c: Parameters<OpenStreams['change']>[0]) => {
      const update = this.streams.change(c);
      if (update) this.emit('message:update', update);
      else if (c?.seq === 0 && 'part' in c) this.emit('message:part', c);
    };
    socket.on(Events.messageDelta, change);
    socket.on(Events.messagePart, change);
    socket.on(Events.messageEnd, (m) => {
      if (typeof m?.id !== 'string') return;
      this.ended.seen(m.id);
      // A history page may have marked an open stream's id seen; its end is still news.
      const held = this.streams.end(m.id);
      if (this.seen.seen(m.id) && !held) return;
      this.delivered(m.id);
      this.emit('message:end', m);
    });
    socket.on(Events.agentActivity, (a) => this.emit('activity', a));
    socket.on(Events.conversationControl, (c) => this.emit('control', c));
    socket.on(Events.agentStatus, (status) => this.emit('agent:status', status));
  }

  /**
   * A message of the conversation, live or replayed (`live`), or paged in after a cut replay: each id
   * once. Only live and replayed ones move the resume point; paged ones are older than those.
   */
  receive(message: ClientInboundMessage, live: boolean): void {
    // A stream that ended while offline comes back as its final message in the replay.
    const held = this.streams.end(message?.id);
    if (typeof message?.id === 'string') {
      if (this.seen.seen(message.id) && !held) return;
      if (live) this.delivered(message.id);
    }
    if (held) {
      this.ended.seen(message.id);
      return this.emit('message:end', { ...message, status: message.status ?? 'complete' } as MessageEnd);
    }
    if (message?.author === 'user') {
      if (live) this.lastClientMessageId = message.clientMessageId;
      // This tab's own send, echoed before its ack arrived (e.g. resent after a reconnect).
      if (this.outbox.has(message.clientMessageId)) return;
    }
    this.emit('message', message);
  }

  /** Moves the resume point to a message the app now has. */
  private delivered(id: string): void {
    this.deliveredOnSocket = true;
    this.resume.set(id);
  }

  /**
   * A page `history()` loaded: its ids count as seen, so a later replay of them is not emitted as
   * `message`. After a gap the stored resume point is unknown to the hub; the newest page, answered
   * on the socket still followed (`resumable`), is a sound one, unless that socket already delivered
   * something (which is at least as new).
   */
  paged(page: HistoryPage, resumable: boolean): HistoryPage {
    let newest: string | undefined;
    page.messages = page.messages.map((m) => {
      // The log holds an open stream at its start with text '': show what this chat holds
      // instead, and leave its id unseen, since its end is still to come.
      const held = this.streams.get(m.id);
      if (held) return { ...m, ...held, streaming: true };
      if (m.streaming) return m;
      this.seen.seen((newest = m.id));
      return m;
    });
    if (resumable && newest && !this.deliveredOnSocket) this.resume.set(newest);
    return page;
  }
}
