import { AbstractChat, type ChatInit, type ChatState, type ChatStatus, type UIMessage } from 'ai';

/**
 * The AI SDK's chat state machine (`AbstractChat` from `ai`) with the smallest state a framework
 * binding would give it: plain fields, and a change signal tests can await instead of polling.
 */
class PlainChatState implements ChatState<UIMessage> {
  private currentStatus: ChatStatus = 'ready';
  error: Error | undefined = undefined;
  private readonly listeners = new Set<() => void>();

  constructor(public messagesHeld: UIMessage[]) {}

  get status(): ChatStatus {
    return this.currentStatus;
  }
  set status(status: ChatStatus) {
    this.currentStatus = status;
    this.changed();
  }
  get messages(): UIMessage[] {
    return this.messagesHeld;
  }
  set messages(messages: UIMessage[]) {
    this.messagesHeld = [...messages];
    this.changed();
  }
  pushMessage = (message: UIMessage): void => {
    this.messagesHeld = [...this.messagesHeld, message];
    this.changed();
  };
  popMessage = (): void => {
    this.messagesHeld = this.messagesHeld.slice(0, -1);
    this.changed();
  };
  replaceMessage = (index: number, message: UIMessage): void => {
    this.messagesHeld = [...this.messagesHeld.slice(0, index), message, ...this.messagesHeld.slice(index + 1)];
    this.changed();
  };
  snapshot = <T>(thing: T): T => structuredClone(thing);

  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private changed(): void {
    for (const listener of [...this.listeners]) listener();
  }
}

/** An `AbstractChat` on {@link PlainChatState}: what `useChat` drives in React, here in Node. */
export class PlainChat extends AbstractChat<UIMessage> {
  private readonly plain: PlainChatState;

  constructor(init: ChatInit<UIMessage>) {
    const state = new PlainChatState(init.messages ?? []);
    super({ ...init, state });
    this.plain = state;
  }

  /** Resolves once `condition` holds for this chat (checked now and on every change), or rejects after `timeoutMs`. */
  until(condition: (chat: PlainChat) => boolean, timeoutMs = 15_000, what = 'the chat condition'): Promise<void> {
    if (condition(this)) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        off();
        reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}; messages: ${JSON.stringify(this.messages)}`));
      }, timeoutMs);
      const off = this.plain.onChange(() => {
        if (!condition(this)) return;
        clearTimeout(timer);
        off();
        resolve();
      });
    });
  }
}

/** The text of a UI message's text parts. */
export function textOf(message: UIMessage | undefined): string {
  return (message?.parts ?? []).map((part) => (part.type === 'text' ? part.text : '')).join('');
}
