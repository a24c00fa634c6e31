/**
 * How the hub builds every message it sends or logs from a message's content (docs/parts.md): one
 * place for the field order and for when `data` and `parts` are present. Payloads (H→A `message`,
 * H→C `message`), log entries, stream starts, snapshots and finals all come from here. No runtime
 * dependencies, so the SDKs may use it too.
 */
import { Authors, type StreamStatus } from './names';
import type { MessagePart } from './parts';
import type { AgentInboundMessage, ClientInboundMessage, MessageContent, MessageData, MessageEnd, MessageStart } from './payloads';

/** `parts` as a message carries them: absent on plain text (no parts, or one text part, which `text` then equals). */
export function plainOrParts(parts: readonly MessagePart[] | undefined): MessagePart[] | undefined {
  if (parts === undefined || parts.length === 0) return undefined;
  if (parts.length === 1 && parts[0].type === 'text') return undefined;
  return [...parts];
}

/** A message's identity as the hub stamped it. */
export interface Stamp {
  id: string;
  ts: string;
  agentId: string;
}

/** Adds `text`, `data` and `parts` (when present) to `message`, in the wire's field order. */
function withContent<T extends object>(message: T, content: MessageContent): T & MessageContent {
  const out = message as T & MessageContent;
  out.text = content.text;
  if (content.data !== undefined) out.data = content.data;
  const parts = plainOrParts(content.parts);
  if (parts !== undefined) out.parts = parts;
  return out;
}

/** A user's message as logged and shown to the user's other tabs. */
export function userMessage(stamp: Stamp, content: MessageContent, clientMessageId: string): ClientInboundMessage {
  const message = withContent<ClientInboundMessage>(
    { id: stamp.id, ts: stamp.ts, agentId: stamp.agentId, author: Authors.user } as ClientInboundMessage,
    content,
  );
  message.clientMessageId = clientMessageId;
  return message;
}

/** A user's message as its runtime gets it (H→A `message`). */
export function agentInboundMessage(stamp: Stamp, from: string, content: MessageContent, observed = false): AgentInboundMessage {
  const message = withContent<AgentInboundMessage>(
    { id: stamp.id, ts: stamp.ts, agentId: stamp.agentId, from } as AgentInboundMessage,
    content,
  );
  // While an operator holds the conversation the bot keeps the context but must not answer (docs/handoff.md).
  if (observed) message.observed = true;
  return message;
}

/** A bot's message (reply, REST publish, a stream's start or final) as logged and sent to clients. */
export function botMessage(stamp: Stamp, content: MessageContent, replyTo?: string): ClientInboundMessage {
  const message = withContent<ClientInboundMessage>(
    { id: stamp.id, ts: stamp.ts, agentId: stamp.agentId, author: Authors.agent } as ClientInboundMessage,
    content,
  );
  if (replyTo !== undefined) message.replyTo = replyTo;
  return message;
}

/** An operator's message (docs/handoff.md) as logged and sent to the user and the consoles. */
export function operatorMessage(stamp: Stamp, content: MessageContent, operator: { name: string }): ClientInboundMessage {
  const message = withContent<ClientInboundMessage>(
    { id: stamp.id, ts: stamp.ts, agentId: stamp.agentId, author: Authors.operator } as ClientInboundMessage,
    content,
  );
  message.operator = operator;
  return message;
}

/** The final of a streamed message as the log keeps it: `status` absent when `complete`. */
export function finalMessage(
  start: ClientInboundMessage,
  content: { text: string; parts?: readonly MessagePart[]; data?: MessageData },
  status: StreamStatus,
): ClientInboundMessage {
  const final = botMessage(
    start,
    { text: content.text, data: content.data, parts: content.parts as MessagePart[] | undefined },
    start.replyTo,
  );
  if (status !== 'complete') final.status = status;
  return final;
}

/** H→C `message:end` of a final: the final with its status, `complete` included. */
export function messageEnd(final: ClientInboundMessage, status: StreamStatus): MessageEnd {
  const { status: _logged, ...rest } = final;
  return { ...(rest as Omit<MessageEnd, 'status'>), author: Authors.agent, status };
}

/** H→C `message:start` of an open stream: its start with the text and parts it holds after `seq` changes. */
export function messageStart(start: ClientInboundMessage, text: string, parts: readonly MessagePart[], seq: number): MessageStart {
  const out: MessageStart = { id: start.id, ts: start.ts, agentId: start.agentId, author: Authors.agent } as MessageStart;
  if (start.replyTo !== undefined) out.replyTo = start.replyTo;
  if (start.data !== undefined) out.data = start.data;
  out.text = text;
  const shown = plainOrParts(parts);
  if (shown !== undefined) out.parts = shown;
  out.seq = seq;
  return out;
}

/** A message's parts, materialized: its `parts`, or the one text part an absent `parts` stands for (none when `text` is ''). */
export function partsOf(message: { text: string; parts?: MessagePart[] }): MessagePart[] {
  if (message.parts !== undefined) return [...message.parts];
  return message.text === '' ? [] : [{ type: 'text', text: message.text }];
}
