import type { ClientInboundMessage, MessageDelta, MessageEnd, MessageStart } from '../../protocol';

/**
 * One conversation's transcript. The one place the console turns messages into DOM: every text a
 * user, a bot or an operator wrote is set with textContent, never parsed as markup. Streamed
 * answers grow in place as their deltas arrive (by `seq`, so a repeat or a gap is not appended).
 */
export class TranscriptView {
  private readonly rows = new Map<string, { li: HTMLElement; text: HTMLElement; seq: number }>();

  constructor(private readonly root: HTMLElement) {}

  reset(messages: ClientInboundMessage[], streams: MessageStart[]): void {
    this.root.replaceChildren();
    this.rows.clear();
    for (const m of messages) this.message(m);
    for (const s of streams) this.start(s);
  }

  message(m: ClientInboundMessage): void {
    const row = this.rows.get(m.id) ?? this.add(m.id, m.author, m.ts, m.operator?.name);
    row.text.textContent = m.text;
    row.li.dataset.streaming = String(m.streaming === true);
    this.scroll();
  }

  start(s: MessageStart): void {
    const row = this.rows.get(s.id) ?? this.add(s.id, 'agent', s.ts);
    row.text.textContent = s.text;
    row.seq = s.seq;
    row.li.dataset.streaming = 'true';
    this.scroll();
  }

  delta(d: MessageDelta): void {
    const row = this.rows.get(d.id);
    if (!row || d.seq !== row.seq + 1) return;
    row.text.textContent += d.text;
    row.seq = d.seq;
    this.scroll();
  }

  end(e: MessageEnd): void {
    const row = this.rows.get(e.id) ?? this.add(e.id, 'agent', e.ts);
    row.text.textContent = e.text;
    row.li.dataset.streaming = 'false';
    if (e.status !== 'complete') row.li.dataset.status = e.status;
    this.scroll();
  }

  private add(id: string, author: string, ts: string, operator?: string) {
    const li = document.createElement('div');
    li.className = author;
    li.dataset.id = id;
    const meta = document.createElement('span');
    meta.className = 'meta';
    const who = author === 'user' ? 'User' : author === 'agent' ? 'Bot' : author === 'operator' ? (operator ?? 'Operator') : '';
    if (author !== 'system') {
      const time = document.createElement('time');
      time.dateTime = ts;
      time.textContent = new Date(ts).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
      meta.append(`${who} · `, time);
      li.append(meta);
    }
    const text = document.createElement('span');
    text.className = 'text';
    li.append(text);
    this.root.append(li);
    const row = { li, text, seq: 0 };
    this.rows.set(id, row);
    return row;
  }

  private scroll(): void {
    this.root.scrollTop = this.root.scrollHeight;
  }
}
