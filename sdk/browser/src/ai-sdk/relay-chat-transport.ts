import type { ClientInboundMessage, MessageEnd, MessagePart } from '../../../../src/protocol';
import type { UIMessageChunk } from '../../../../src/protocol/ui-message-chunk';
import { RelayChat, type RelayChatOptions } from '../index';
import { MessageChunker, type HubContent } from './ui-chunks';
import { toUIMessage, toUIPart, type RelayUIMessage } from './ui-messages';

/** A message the AI SDK hands to `sendMessages` (its `UIMessage`, as far as the transport reads it). */
export interface SentUIMessage {
  id: string;
  role: 'system' | 'user' | 'assistant';
  parts: Array<{ type: string; text?: string; state?: string; approval?: { id: string; approved?: boolean; reason?: string } }>;
}

/** `sendMessages` options, as `AbstractChat` passes them. */
export interface SendMessagesOptions {
  trigger: 'submit-message' | 'regenerate-message';
  chatId: string;
  messageId: string | undefined;
  messages: SentUIMessage[];
  abortSignal: AbortSignal | undefined;
}

/** What {@link RelayChatTransport.attach} needs of an AI SDK chat (`Chat` of `@ai-sdk/react`, any `AbstractChat`). */
export interface AttachableChat {
  messages: Array<{ id: string; parts: unknown[] }>;
  readonly status: 'submitted' | 'streaming' | 'ready' | 'error';
  resumeStream(): Promise<void>;
}

/** An answer being streamed: the content held so far, updated from every event. */
interface OpenAnswer extends HubContent {
  id: string;
  replyTo?: string;
}

/** The message event of a `RelayChat` that started a stream or was a plain reply. */
type InboundMessage = ClientInboundMessage & { streaming?: true; seq?: number };

/**
 * A `ChatTransport` of the Vercel AI SDK (`ai` ≥ 5, tested on 7) whose messages travel through a
 * relay hub: `useChat({ transport })` in React, or any `AbstractChat` (docs/ai-sdk.md). Sending
 * posts the user's message to the bot; the answer comes back as `UIMessageChunk`s with every part;
 * the chat's stop stops the bot; `reconnectToStream` resumes an answer from the hub's snapshot
 * (`resumeStreamIsReplay`: the snapshot is the whole answer so far, so nothing is doubled); tool
 * approvals given with `addToolApprovalResponse` go to the hub, which hands them to the bot.
 * It owns one {@link RelayChat}: `token` takes what `RelayChat` takes.
 *
 * @example
 * import { Chat } from '@ai-sdk/react';
 * import { RelayChatTransport } from '@relay-hub/browser/ai-sdk';
 * const transport = new RelayChatTransport({ url: 'https://relay.example.com', agentId: 'support-bot', token: getToken });
 * const chat = new Chat({ transport, messages: await transport.loadMessages() });
 */
export class RelayChatTransport {
  /** A resumed stream starts with everything the answer holds so far. */
  readonly resumeStreamIsReplay = true;
  /** The chat connection the transport sends and listens through. */
  readonly chat: RelayChat;
  private readonly answers = new Map<string, OpenAnswer>();
  private readonly sentApprovals = new Set<string>();
  /** Bot messages a stream of this transport follows (see {@link attach}). */
  private readonly claimed = new Set<string>();
  /** Sends waiting for their ack: an answer that starts meanwhile may be theirs. */
  private sending: Promise<unknown> = Promise.resolve();
  private readonly unsubscribe: Array<() => void> = [];

  constructor(options: RelayChatOptions | { chat: RelayChat }) {
    this.chat = 'chat' in options ? options.chat : new RelayChat(options);
    // Every open answer is tracked from the start, so a resume finds the ones another tab asked for.
    this.unsubscribe.push(
      this.chat.on('message', (m: InboundMessage) => {
        if (m.author === 'agent' && m.streaming) this.answers.set(m.id, { id: m.id, text: m.text, parts: m.parts, replyTo: m.replyTo });
      }),
      this.chat.on('message:update', (u) => this.answers.get(u.id) && Object.assign(this.answers.get(u.id)!, contentOf(u))),
      this.chat.on('message:end', (m) => this.answers.delete(m.id)),
    );
  }

  /** Sends the user's newest message (or the approvals of the newest answer) and streams the answer. */
  async sendMessages(options: SendMessagesOptions): Promise<ReadableStream<UIMessageChunk>> {
    if (options.trigger === 'regenerate-message') {
      throw new Error('RelayChatTransport: regenerating an answer is not supported (the hub keeps every answer in the conversation log)');
    }
    const last = options.messages[options.messages.length - 1];
    if (!last) throw new Error('RelayChatTransport: there is no message to send');
    if (last.role === 'assistant') return this.sendApprovals(last, options.abortSignal);
    const text = last.parts.map((part) => (part.type === 'text' && typeof part.text === 'string' ? part.text : '')).join('');
    let replyTo: string | undefined;
    const early: InboundMessage[] = [];
    // The bot may answer before the send's ack arrives: what comes first waits for the id.
    const stopEarly = this.chat.on('message', (m: InboundMessage) => void early.push(m));
    const sent = this.chat.send(text);
    this.sending = Promise.all([this.sending, sent.catch(() => {})]);
    try {
      replyTo = (await sent).id;
    } finally {
      stopEarly();
    }
    return this.follow((m) => m.replyTo === replyTo, options.abortSignal, early);
  }

  /**
   * Resumes the newest answer still being streamed, from the hub's snapshot: `null` when none is
   * open. Waits for the connection first.
   */
  async reconnectToStream(options: { chatId: string; abortSignal?: AbortSignal }): Promise<ReadableStream<UIMessageChunk> | null> {
    await this.connected(options.abortSignal);
    // The page's newest messages, with each open answer as the chat holds it; the round trip also
    // lets the snapshots the hub sends on connect arrive first.
    const { messages } = await this.chat.history({ limit: 50 });
    let newest: OpenAnswer | undefined;
    for (const m of messages as InboundMessage[]) {
      if (m.author === 'agent' && m.streaming) newest = { id: m.id, ...contentOf(this.answers.get(m.id) ?? m), replyTo: m.replyTo };
    }
    if (!newest) return null;
    const id = newest.id;
    return this.follow((m) => m.id === id, options.abortSignal, [], newest);
  }

  /**
   * The conversation so far as the AI SDK's messages, oldest first: pass it as the chat's initial
   * `messages`. An answer still streaming is left out; `reconnectToStream` brings it.
   */
  async loadMessages(limit = 50): Promise<RelayUIMessage[]> {
    const page = await this.chat.history({ limit });
    return page.messages.filter((m) => !(m as InboundMessage).streaming).map((m) => toUIMessage(m));
  }

  /**
   * Keeps an AI SDK chat in step with the conversation's other tabs and devices (the AI SDK has no
   * channel for what it did not ask for): the user's messages sent elsewhere are appended, an answer
   * this chat did not ask for is followed with `chat.resumeStream()` (or appended once it ended,
   * when the chat was busy), a plain bot message is appended, and a change to an ended answer (a
   * decision on its approval) replaces that part. Returns a function that stops it.
   */
  attach(chat: AttachableChat): () => void {
    const known = (id: string) => chat.messages.some((m) => m.id === id);
    const offs = [
      this.chat.on('message', (m: InboundMessage) => {
        if (m.author === 'user') {
          if (!known(m.id)) chat.messages = [...chat.messages, toUIMessage(m)];
          return;
        }
        // Decided once this transport's own sends have their ids and its streams have claimed theirs.
        void this.sending.then(() => {
          if (this.claimed.has(m.id) || known(m.id)) return;
          if (!m.streaming) chat.messages = [...chat.messages, toUIMessage(m)];
          else if (chat.status === 'ready' || chat.status === 'error') void chat.resumeStream();
        });
      }),
      // A part of an answer that has ended changed (a decision on its approval, made in any tab).
      this.chat.on('message:part', (c) => {
        const at = chat.messages.findIndex((m) => m.id === c.id);
        if (at === -1) return;
        const held = chat.messages[at];
        const parts = [...held.parts];
        parts[c.index] = toUIPart(c.part, c.index);
        chat.messages = [...chat.messages.slice(0, at), { ...held, parts }, ...chat.messages.slice(at + 1)];
      }),
      this.chat.on('message:end', (m: MessageEnd) => {
        void this.sending.then(() => {
          if (this.claimed.has(m.id) || known(m.id)) return;
          const final: ClientInboundMessage = { id: m.id, ts: m.ts, agentId: m.agentId, author: 'agent', text: m.text };
          if (m.parts) final.parts = m.parts;
          chat.messages = [...chat.messages, toUIMessage(final)];
        });
      }),
    ];
    return () => {
      for (const off of offs) off();
    };
  }

  /** Closes the chat connection (the AI SDK calls it when its chat is disposed). */
  close(): void {
    for (const off of this.unsubscribe.splice(0)) off();
    this.chat.close();
  }

  private async sendApprovals(answer: SentUIMessage, abortSignal: AbortSignal | undefined): Promise<ReadableStream<UIMessageChunk>> {
    const early: InboundMessage[] = [];
    // The bot may answer the decision before the hub's ack of it arrives: what comes first waits.
    const stopEarly = this.chat.on('message', (m: InboundMessage) => void early.push(m));
    const deciding = (async () => {
      for (const part of answer.parts) {
        const approval = part.approval;
        if (part.state !== 'approval-responded' || !approval || approval.approved === undefined || this.sentApprovals.has(approval.id))
          continue;
        this.sentApprovals.add(approval.id);
        await this.chat.approve(answer.id, approval.id, approval.approved, approval.reason);
      }
    })();
    this.sending = Promise.all([this.sending, deciding.catch(() => {})]);
    try {
      await deciding;
    } finally {
      stopEarly();
    }
    const open = this.answers.get(answer.id);
    // The answer that asked is still streaming: follow it on. Else the bot answers the decision with
    // a new message, which the AI SDK appends to the answer that asked (a continuation keeps its id).
    if (open) return this.follow((m) => m.id === answer.id, abortSignal, [], open);
    return this.follow((m) => m.author === 'agent', abortSignal, early, undefined, true);
  }

  /**
   * The chunks of the first bot message `matches` accepts (a stream, or a plain reply), until it
   * ends. `from` is the content the stream starts at (a snapshot); `early` are message events that
   * came before the caller could listen.
   */
  private follow(
    matches: (m: InboundMessage) => boolean,
    abortSignal: AbortSignal | undefined,
    early: InboundMessage[],
    from?: OpenAnswer,
    continuation = false,
  ): ReadableStream<UIMessageChunk> {
    const chat = this.chat;
    const cleanup: Array<() => void> = [];
    let chunker: MessageChunker | undefined;
    let done = false;
    const finish = (controller: ReadableStreamDefaultController<UIMessageChunk>) => {
      if (done) return;
      done = true;
      for (const off of cleanup.splice(0)) off();
      controller.close();
    };
    return new ReadableStream<UIMessageChunk>({
      start: (controller) => {
        const write = (chunks: UIMessageChunk[]) => {
          if (!done) for (const chunk of chunks) controller.enqueue(chunk);
        };
        const begin = (m: InboundMessage) => {
          if (chunker || m.author !== 'agent' || !matches(m)) return;
          this.claimed.add(m.id);
          chunker = new MessageChunker(m.id, continuation);
          if (m.streaming) return write(chunker.start(contentOf(m)));
          // A plain reply: the whole answer at once.
          write(chunker.start({ text: '' }));
          write(chunker.end({ ...contentOf(m), status: m.status ?? 'complete' }));
          finish(controller);
        };
        cleanup.push(
          chat.on('message', begin),
          chat.on('message:update', (u) => {
            if (chunker && u.id === chunker.messageId) write(chunker.update(contentOf(u)));
          }),
          chat.on('message:end', (m: MessageEnd) => {
            if (!chunker || m.id !== chunker.messageId) return;
            write(chunker.end({ ...contentOf(m), status: m.status }));
            finish(controller);
          }),
        );
        if (from) begin({ ...from, ts: '', agentId: '', author: 'agent', streaming: true });
        for (const m of early) begin(m);
        if (abortSignal) {
          const onAbort = () => {
            // Stops the answer on the hub (before it exists: the one to the user's last message).
            chat.stop(chunker?.messageId).catch(() => {});
            finish(controller);
          };
          if (abortSignal.aborted) onAbort();
          else {
            abortSignal.addEventListener('abort', onAbort, { once: true });
            cleanup.push(() => abortSignal.removeEventListener('abort', onAbort));
          }
        }
      },
      cancel: () => {
        done = true;
        for (const off of cleanup.splice(0)) off();
      },
    });
  }

  private connected(abortSignal: AbortSignal | undefined): Promise<void> {
    if (this.chat.state === 'connected') return Promise.resolve();
    return new Promise((resolve, reject) => {
      const off = this.chat.on('state', ({ state, code }) => {
        if (state === 'connected') {
          off();
          resolve();
        } else if (state === 'disconnected') {
          off();
          reject(new Error(`RelayChatTransport: the chat stopped (${code ?? 'closed'})`));
        }
      });
      abortSignal?.addEventListener('abort', () => {
        off();
        reject(new DOMException('aborted', 'AbortError'));
      });
    });
  }
}

/** The content of a message event: its parts when it carries them, else its text. */
function contentOf(m: { text: string; parts?: MessagePart[] }): HubContent {
  return m.parts !== undefined ? { text: m.text, parts: m.parts } : { text: m.text };
}
