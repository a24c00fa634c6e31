import type { ClientInboundMessage, MessageEnd, StreamingMessage } from '../../browser/src';
import { fill, type Strings } from './strings';
import type { ViewMessage } from './transcript/message-view';
import type { Part } from './transcript/parts/types';

/** A message of the browser SDK as the widget reads it: a new one, a stream's update or its end. */
export type Inbound = Omit<ClientInboundMessage | StreamingMessage | MessageEnd, 'status' | 'author'> & {
  author: string;
  parts?: Part[];
  streaming?: boolean;
  status?: string;
  feedback?: ClientInboundMessage['feedback'];
  /** On `system` messages, the state entered; on those and `operator` ones, who (docs/handoff.md). */
  control?: string;
  operator?: { name: string };
};

/** A message of the SDK as the transcript shows it; `me` is this user's id at the hub. */
export function toView(m: Inbound, s: Strings, me: string | undefined): ViewMessage {
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
