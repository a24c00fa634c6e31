import type { ConversationItem } from './console-api';

/**
 * The conversation list: waiting first (the bot's reason, how long it has waited), then held and
 * live ones (last message, control badge). A listbox: up and down move the selection, Enter or a
 * click opens the conversation.
 */
export class ConversationListView {
  private items: ConversationItem[] = [];
  private active = 0;

  constructor(
    private readonly root: HTMLUListElement,
    private readonly onOpen: (item: ConversationItem) => void,
  ) {
    root.addEventListener('keydown', (e) => {
      if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
        e.preventDefault();
        this.move(e.key === 'ArrowDown' ? 1 : -1);
      } else if (e.key === 'Enter' && this.items[this.active]) {
        e.preventDefault();
        this.onOpen(this.items[this.active]);
      }
    });
  }

  render(items: ConversationItem[], openId: string | undefined): void {
    const activeId = this.items[this.active]?.clientId ?? openId;
    this.items = items;
    const at = items.findIndex((i) => i.clientId === activeId);
    this.active = at >= 0 ? at : 0;
    this.root.replaceChildren(...(items.length === 0 ? [empty()] : items.map((item, i) => this.row(item, i, item.clientId === openId))));
    this.mark();
  }

  private row(item: ConversationItem, index: number, open: boolean): HTMLLIElement {
    const li = document.createElement('li');
    li.id = `conv-${index}`;
    li.setAttribute('role', 'option');
    li.dataset.clientId = item.clientId;
    if (open) li.dataset.open = 'true';
    const name = document.createElement('span');
    name.className = 'name';
    const dot = document.createElement('span');
    dot.className = 'dot';
    dot.dataset.online = String(item.online);
    dot.setAttribute('aria-label', item.online ? 'online' : 'offline');
    dot.setAttribute('role', 'img');
    name.append(dot, item.clientId);
    const badge = document.createElement('span');
    badge.className = 'badge';
    badge.dataset.control = item.control;
    badge.textContent = item.control === 'human' ? `with ${item.operator?.name ?? 'an operator'}` : item.control;
    const sub = document.createElement('span');
    sub.className = 'sub';
    sub.textContent =
      item.control === 'waiting'
        ? `${item.reason ?? 'Asked for a person'} · waiting ${since(item.since)}`
        : item.lastMessage
          ? `${item.lastMessage.author === 'user' ? '' : `${item.lastMessage.author}: `}${item.lastMessage.text}`
          : 'No messages yet';
    li.append(name, badge, sub);
    li.addEventListener('click', () => {
      this.active = index;
      this.mark();
      this.onOpen(item);
    });
    return li;
  }

  private move(by: number): void {
    if (this.items.length === 0) return;
    this.active = Math.min(this.items.length - 1, Math.max(0, this.active + by));
    this.mark();
  }

  private mark(): void {
    for (const li of Array.from(this.root.querySelectorAll<HTMLLIElement>('li[role="option"]')))
      li.setAttribute('aria-selected', String(li.id === `conv-${this.active}`));
    const current = this.root.querySelector<HTMLLIElement>(`#conv-${this.active}`);
    if (current) {
      this.root.setAttribute('aria-activedescendant', current.id);
      current.scrollIntoView({ block: 'nearest' });
    } else this.root.removeAttribute('aria-activedescendant');
  }
}

function empty(): HTMLLIElement {
  const li = document.createElement('li');
  li.className = 'empty';
  li.textContent = 'No live or waiting conversations.';
  return li;
}

/** "3 min", "45 s": how long since `iso`. */
export function since(iso: string | undefined): string {
  if (!iso) return '';
  const s = Math.max(0, Math.round((Date.now() - Date.parse(iso)) / 1000));
  if (s < 60) return `${s} s`;
  const m = Math.round(s / 60);
  return m < 60 ? `${m} min` : `${Math.round(m / 60)} h`;
}
