import type { MessagePart, StreamStatus, ToolPart } from '../../../../src/protocol';
import type { UIMessageChunk } from '../../../../src/protocol/ui-message-chunk';

/** A hub message as the chunker reads it: `parts` when it has them, else its `text`. */
export interface HubContent {
  text: string;
  parts?: MessagePart[];
}

/** The parts of a hub message; a plain text message is one text part (none while its text is empty). */
export function partsOf(message: HubContent): MessagePart[] {
  if (message.parts && message.parts.length > 0) return message.parts;
  return message.text === '' ? [] : [{ type: 'text', text: message.text }];
}

const TOOL_ORDER: ToolPart['state'][] = ['input-streaming', 'input-available', 'approval-requested', 'approval-responded'];

/**
 * Turns the successive states of one hub message (its snapshot on start or reconnect, each update,
 * its end) into the AI SDK's UI message chunks (docs/ai-sdk.md#hub-messages-as-chunks). It diffs
 * the parts it last wrote against the new ones, so it does not matter whether an update carried a
 * delta, a new part or a replaced one: text that grew becomes a delta, a tool call that moved on
 * becomes the chunks of each state it passed.
 */
export class MessageChunker {
  private held: MessagePart[] = [];
  /** Text and reasoning parts started and not yet ended, by index. */
  private readonly openText = new Map<number, 'text' | 'reasoning'>();
  private ended = false;

  constructor(
    /** The hub's message id: the UIMessage's id. */
    readonly messageId: string,
    /** The message continues the chat's last answer (a reply to an approval): `start` leaves its id alone. */
    private readonly continuation = false,
  ) {}

  /** `start` with the message id (none for a continuation), then the chunks of what the message holds already. */
  start(message: HubContent): UIMessageChunk[] {
    return [this.continuation ? { type: 'start' } : { type: 'start', messageId: this.messageId }, ...this.update(message)];
  }

  /** The chunks that bring what was written up to `message`. */
  update(message: HubContent): UIMessageChunk[] {
    if (this.ended) return [];
    const next = partsOf(message);
    const chunks: UIMessageChunk[] = [];
    next.forEach((part, index) => chunks.push(...this.diff(index, this.held[index], part)));
    this.held = next.map((part) => ({ ...part }));
    return chunks;
  }

  /** The last changes, the ends of open text and reasoning parts, and how the answer ended. */
  end(message: HubContent & { status: StreamStatus }): UIMessageChunk[] {
    const chunks = this.update(message);
    if (this.ended) return chunks;
    this.ended = true;
    chunks.push(...this.closeText());
    if (message.status === 'complete') chunks.push({ type: 'finish' });
    else if (message.status === 'cancelled') chunks.push({ type: 'abort', reason: 'stopped' });
    else chunks.push({ type: 'error', errorText: `the answer ended: ${message.status}` });
    return chunks;
  }

  private diff(index: number, before: MessagePart | undefined, part: MessagePart): UIMessageChunk[] {
    // A part whose type changed at an index (a corrected final answer) cannot be taken back from the
    // AI SDK's message: it is written as new only when nothing was there.
    if (before !== undefined && before.type !== part.type) return [];
    const id = `${this.messageId}:${index}`;
    switch (part.type) {
      case 'text':
      case 'reasoning': {
        const held = before?.type === part.type ? before.text : undefined;
        const chunks: UIMessageChunk[] = [];
        if (held === undefined) {
          chunks.push(...this.closeText(), { type: `${part.type}-start`, id });
          this.openText.set(index, part.type);
        }
        const grown = part.text.startsWith(held ?? '') ? part.text.slice((held ?? '').length) : '';
        if (grown !== '') chunks.push({ type: `${part.type}-delta`, id, delta: grown });
        return chunks;
      }
      case 'tool':
        return this.tool(before?.type === 'tool' ? before : undefined, part);
      case 'source':
        if (before) return [];
        if (part.url !== undefined) return [withTitle({ type: 'source-url', sourceId: part.sourceId, url: part.url }, part.title)];
        return [
          {
            type: 'source-document',
            sourceId: part.sourceId,
            mediaType: part.mediaType ?? 'text/plain',
            title: part.title ?? part.filename ?? part.sourceId,
            ...(part.filename !== undefined ? { filename: part.filename } : {}),
          },
        ];
      case 'file':
        return before ? [] : [{ type: 'file', url: part.url, mediaType: part.mediaType }];
      case 'data':
        // The AI SDK replaces a data part of the same type and id: an update becomes a new chunk.
        if (before && JSON.stringify(before) === JSON.stringify(part)) return [];
        return [{ type: `data-${part.name}`, id: part.id ?? id, data: part.data }];
      case 'suggestions':
        if (before && JSON.stringify(before) === JSON.stringify(part)) return [];
        return [{ type: 'data-suggestions', id, data: part.items }];
    }
  }

  /** The chunks of every state a tool call passed since `before`. */
  private tool(before: ToolPart | undefined, part: ToolPart): UIMessageChunk[] {
    const chunks: UIMessageChunk[] = [];
    // `dynamic`: the AI SDK makes a `dynamic-tool` part, as the browser does not know the bot's tool schemas.
    const call = {
      toolCallId: part.toolCallId,
      toolName: part.toolName,
      dynamic: true,
      ...(part.title !== undefined ? { title: part.title } : {}),
    };
    if (!before) chunks.push({ type: 'tool-input-start', ...call });
    const heldInput = before?.inputText ?? '';
    const input = part.inputText ?? '';
    if (input.length > heldInput.length && input.startsWith(heldInput)) {
      chunks.push({ type: 'tool-input-delta', toolCallId: part.toolCallId, inputTextDelta: input.slice(heldInput.length) });
    }
    const from = before ? rank(before.state) : 0;
    const to = rank(part.state);
    const ended = (s: ToolPart['state']) => s === 'output-available' || s === 'output-error' || s === 'output-denied';
    if (from < 1 && to >= 1 && !(part.state === 'output-error' && part.input === undefined)) {
      chunks.push({ type: 'tool-input-available', ...call, input: part.input ?? {} });
    }
    if (from < 2 && to >= 2 && part.approval) {
      chunks.push({ type: 'tool-approval-request', toolCallId: part.toolCallId, approvalId: part.approval.id });
    }
    if (from < 3 && to >= 3 && part.approval?.approved !== undefined) {
      chunks.push({
        type: 'tool-approval-response',
        approvalId: part.approval.id,
        approved: part.approval.approved,
        ...(part.approval.reason !== undefined ? { reason: part.approval.reason } : {}),
      });
    }
    if (ended(part.state) && (!before || !ended(before.state) || JSON.stringify(before.output) !== JSON.stringify(part.output))) {
      if (part.state === 'output-available')
        chunks.push({ type: 'tool-output-available', toolCallId: part.toolCallId, output: part.output });
      else if (part.state === 'output-error')
        chunks.push({ type: 'tool-output-error', toolCallId: part.toolCallId, errorText: part.errorText ?? 'the tool failed' });
      else chunks.push({ type: 'tool-output-denied', toolCallId: part.toolCallId });
    }
    return chunks;
  }

  private closeText(): UIMessageChunk[] {
    const chunks: UIMessageChunk[] = [];
    for (const [index, type] of this.openText) chunks.push({ type: `${type}-end`, id: `${this.messageId}:${index}` });
    this.openText.clear();
    return chunks;
  }
}

/** 0 input-streaming … 3 approval-responded, 4 for the three `output-*` states. */
function rank(state: ToolPart['state']): number {
  const at = TOOL_ORDER.indexOf(state);
  return at === -1 ? 4 : at;
}

function withTitle<T extends object>(chunk: T, title: string | undefined): T & { title?: string } {
  return title === undefined ? chunk : { ...chunk, title };
}
