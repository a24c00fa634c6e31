import type { DebugTrace } from '../../protocol';

/** Most traces kept per conversation; older ones go first. */
const MAX_TRACES = 200;

/**
 * The bot's debug traces beside the open conversation: collapsible entries, the time and the
 * trace's first words in the summary, the whole trace as indented JSON (textContent) in a
 * monospace body. Traces of every conversation of the bot are kept, so opening one shows what
 * came before.
 */
export class TracesView {
  private readonly byClient = new Map<string, DebugTrace[]>();
  private open?: string;

  constructor(
    private readonly root: HTMLElement,
    private readonly hint: HTMLElement,
  ) {}

  add(trace: DebugTrace): void {
    const clientId = trace.clientId ?? '';
    const list = this.byClient.get(clientId) ?? [];
    list.push(trace);
    if (list.length > MAX_TRACES) list.shift();
    this.byClient.set(clientId, list);
    if (clientId === this.open) this.root.append(entry(trace));
    this.hint.hidden = this.root.childElementCount > 0;
  }

  show(clientId: string): void {
    this.open = clientId;
    this.root.replaceChildren(...(this.byClient.get(clientId) ?? []).map(entry));
    this.hint.hidden = this.root.childElementCount > 0;
  }
}

function entry(trace: DebugTrace): HTMLDetailsElement {
  const details = document.createElement('details');
  const summary = document.createElement('summary');
  const time = document.createElement('time');
  time.dateTime = trace.ts;
  time.textContent = new Date(trace.ts).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit' });
  const body = JSON.stringify(trace.trace, null, 2) ?? String(trace.trace);
  summary.append(time, firstLine(trace.trace));
  const pre = document.createElement('pre');
  pre.textContent = body;
  details.append(summary, pre);
  return details;
}

/** A one-line label: a `step`, `type` or `name` field of the trace, else its start. */
function firstLine(trace: unknown): string {
  if (trace && typeof trace === 'object') {
    const o = trace as Record<string, unknown>;
    for (const k of ['step', 'type', 'name', 'event']) if (typeof o[k] === 'string') return o[k];
  }
  const s = JSON.stringify(trace) ?? '';
  return s.length > 48 ? `${s.slice(0, 48)}…` : s;
}
