import { OpenStreams } from '../../../sdk/browser/src/streams';
import { STRINGS } from '../../../sdk/widget/src/strings';
import { STYLES } from '../../../sdk/widget/src/styles';
import { Transcript } from '../../../sdk/widget/src/transcript/transcript';
import type { ViewMessage } from '../../../sdk/widget/src/transcript/message-view';
import type { Highlighter } from '../../../sdk/widget/src/transcript/code-block';
import type { ClientInboundMessage, MessageDelta, MessageEnd, MessagePartEvent, MessageStart } from '../../protocol';

/**
 * What the console adds to the widget's styles inside its shadow root: no frame of its own (the
 * page draws the pane), and no thumbs (rating is the user's; an operator only reads).
 */
const CONSOLE_STYLES = `:host([mode=inline]) .panel{border:0;border-radius:0}
.actions button[data-rating]{display:none}
.suggested{margin:0;padding:8px 16px;border-top:1px solid var(--bd);color:var(--mu);font-size:13px}
.suggested span{display:inline-block;border:1px solid var(--bd);border-radius:999px;padding:0 8px;margin:2px 0 2px 4px;color:var(--fg)}`;

/**
 * One conversation's transcript, drawn by the widget's own transcript (docs/handoff.md): markdown,
 * and every part — reasoning collapsed, tool steps, sources, files, approvals (which the operator
 * may decide, through `decide`) — exactly as the user sees them, in a shadow root with the widget's
 * styles. Nothing a user, a bot or an operator wrote is parsed as HTML: the widget builds every
 * node itself. Streamed answers grow in place, their deltas and parts applied by the browser SDK's
 * stream state (by `seq`, so a repeat or a gap changes nothing).
 */
export class TranscriptView {
  private transcript: Transcript;
  private streams = new OpenStreams();
  private readonly panel = document.createElement('div');
  /** The newest answer's suggestions, read-only: the user picks them in the widget. */
  private readonly suggested = document.createElement('p');

  /** `decide` records an operator's decision of an approval in the open conversation; it rejects with the reason it could not. */
  constructor(
    root: HTMLElement,
    private readonly decide: (messageId: string, approvalId: string, approved: boolean) => Promise<void>,
  ) {
    const host = document.createElement('div');
    host.setAttribute('mode', 'inline');
    host.id = 'transcript-view';
    const shadow = host.attachShadow({ mode: 'open' });
    const style = document.createElement('style');
    style.textContent = STYLES + CONSOLE_STYLES;
    this.panel.className = 'panel';
    this.suggested.className = 'suggested';
    this.suggested.hidden = true;
    this.transcript = this.create();
    shadow.append(style, this.panel);
    root.replaceChildren(host);
  }

  /** The conversation's recent messages and its open streams, replacing what was shown. */
  reset(messages: ClientInboundMessage[], streams: MessageStart[]): void {
    this.streams = new OpenStreams();
    this.transcript = this.create();
    this.transcript.merge(messages.map(toView), false);
    for (const s of streams) this.start(s);
  }

  message(m: ClientInboundMessage): void {
    this.transcript.upsert(toView(m));
  }

  start(s: MessageStart): void {
    this.streams.start(s);
    this.transcript.upsert(toView({ ...s, author: 'agent', streaming: true }));
  }

  change(c: MessageDelta | MessagePartEvent): void {
    const grown = this.streams.change(c);
    if (grown) return this.transcript.upsert(toView({ ...grown, author: 'agent', streaming: true }));
    // A part of a message that no longer streams (an approval decided after its end).
    const shown = this.transcript.get(c.id);
    if (!shown || !('part' in c) || c.seq !== 0 || !shown.parts?.[c.index]) return;
    const parts = [...shown.parts];
    parts[c.index] = c.part;
    this.transcript.upsert({ ...shown, parts });
  }

  end(e: MessageEnd): void {
    this.streams.end(e.id);
    this.transcript.upsert(toView({ ...e, streaming: false }));
  }

  private create(): Transcript {
    const base = new URL('.', location.href);
    const transcript = new Transcript({
      strings: STRINGS,
      name: () => 'The bot',
      actions: { suggestions: (items) => this.suggest(items) },
      decide: this.decide,
      // The widget's highlighter, served by the hub beside the widget; loaded on the first code block.
      highlighter: () => import(/* @vite-ignore */ new URL('sdk/widget-highlight.mjs', base).href) as Promise<Highlighter>,
    });
    this.suggest([]);
    this.panel.replaceChildren(transcript.element, this.suggested);
    return transcript;
  }

  private suggest(items: { text: string }[]): void {
    this.suggested.hidden = items.length === 0;
    this.suggested.replaceChildren(...(items.length ? ['Suggested to the user:'] : []), ...items.map((i) => span(i.text)));
  }
}

function span(text: string): HTMLElement {
  const el = document.createElement('span');
  el.textContent = text;
  return el;
}

/** A message of the hub as the widget's transcript shows it (the hub's words for a change of control). */
function toView(
  m: Omit<Partial<ClientInboundMessage>, 'status' | 'streaming'> & {
    id: string;
    author: string;
    ts: string;
    status?: string;
    streaming?: boolean;
  },
): ViewMessage {
  return {
    id: m.id,
    author: m.author,
    name: m.operator?.name,
    text: m.text ?? '',
    ts: m.ts,
    parts: Array.isArray(m.parts) ? m.parts : undefined,
    streaming: m.streaming === true,
    status: m.status && m.status !== 'complete' ? m.status : undefined,
    feedback: m.feedback ? { rating: m.feedback.rating } : undefined,
  };
}
