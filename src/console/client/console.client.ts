import { ConsoleApi, ProblemError, type ConversationItem, type OperatorSocket } from './console-api';
import { ConversationListView, since } from './conversation-list.view';
import { TracesView } from './traces.view';
import { TranscriptView } from './transcript.view';
import type { ApprovalAck, ConversationControl, WatchAck } from '../../protocol';

/** How often the console renews its watch of the open conversation (the hub's lease is 90 s). */
const RENEW_WATCH_MS = 30_000;
/** How often the list is read again (who is online changes without an event). */
const REFRESH_LIST_MS = 10_000;
/** How long the console waits for the hub to record an approval decision (it waits for a runtime's ack). */
const DECIDE_TIMEOUT_MS = 15_000;
const STORAGE_KEY = 'relay-console';

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;

/** The signed-in console: one bot, one operator, one open conversation at a time. */
class Console {
  private readonly list: ConversationListView;
  private readonly transcript = new TranscriptView($('transcript'), (messageId, approvalId, approved) =>
    this.decide(messageId, approvalId, approved),
  );
  private readonly traces = new TracesView($('traces'), $('traces-hint'));
  private readonly socket: OperatorSocket;
  private items: ConversationItem[] = [];
  private openId?: string;
  private control?: ConversationControl;
  private me = '';
  private refreshing?: Promise<void>;

  constructor(private readonly api: ConsoleApi) {
    this.list = new ConversationListView($('list'), (item) => void this.open(item.clientId));
    this.socket = api.connect();
    this.socket.on('operator:session', (s) => {
      this.me = s.name;
      $('who').textContent = `${s.name}${s.admin ? ' (admin)' : ''}`;
      if (this.openId) void this.open(this.openId);
      void this.refresh();
    });
    this.socket.on('connect_error', (err) =>
      this.status(`Not connected: ${(err as Error & { data?: { code: string } }).data?.code ?? err.message}`, true),
    );
    this.socket.on('conversation:control', (change) => {
      if (change.clientId === this.openId) this.showControl(change);
      void this.refresh();
    });
    this.socket.on('conversation:message', ({ clientId, message }) => {
      if (clientId === this.openId) this.transcript.message(message);
      void this.refresh();
    });
    this.socket.on('message:start', (s) => this.transcript.start(s));
    this.socket.on('message:delta', (d) => this.transcript.change(d));
    this.socket.on('message:part', (p) => this.transcript.change(p));
    this.socket.on('message:end', (e) => {
      this.transcript.end(e);
      void this.refresh();
    });
    this.socket.on('debug', (trace) => this.traces.add(trace));
    $('takeover').addEventListener('click', () => void this.act(() => this.api.takeOver(this.openId!), 'You took over.'));
    $('release').addEventListener('click', () => void this.act(() => this.api.release(this.openId!), 'Handed back to the bot.'));
    $<HTMLFormElement>('reply').addEventListener('submit', (e) => {
      e.preventDefault();
      const input = $<HTMLTextAreaElement>('reply-text');
      const text = input.value.trim();
      if (!text) return;
      void this.act(() => this.api.reply(this.openId!, text), '').then((ok) => {
        if (ok) input.value = '';
      });
    });
    $<HTMLTextAreaElement>('reply-text').addEventListener('keydown', (e) => {
      if (e.key === 'Enter' && !e.shiftKey) {
        e.preventDefault();
        $<HTMLFormElement>('reply').requestSubmit();
      }
    });
    setInterval(() => void this.refresh(), REFRESH_LIST_MS);
    setInterval(() => this.openId && void this.socket.emitWithAck('conversation:watch', { clientId: this.openId }), RENEW_WATCH_MS);
  }

  /** Reads the list again; calls made while one runs share it. */
  refresh(): Promise<void> {
    this.refreshing ??= this.api
      .conversations()
      .then((items) => {
        this.items = items;
        this.list.render(items, this.openId);
      })
      .catch((err: unknown) => this.status(err instanceof Error ? err.message : String(err), true))
      .finally(() => (this.refreshing = undefined));
    return this.refreshing;
  }

  async open(clientId: string): Promise<void> {
    this.openId = clientId;
    this.list.render(this.items, clientId);
    $('conversation-title').textContent = clientId;
    this.traces.show(clientId);
    const ack = (await this.socket.timeout(10_000).emitWithAck('conversation:watch', { clientId })) as WatchAck;
    if (!ack.ok) return this.status(ack.error.message, true);
    if (this.openId !== clientId) return;
    this.transcript.reset(ack.messages, ack.streams);
    this.showControl(ack.control);
    this.status('', false);
  }

  /**
   * Decides a user's approval request as this operator (docs/handoff.md "Deciding approvals"). A
   * refusal shows in the status line and on the card, whose buttons come back.
   */
  private async decide(messageId: string, approvalId: string, approved: boolean): Promise<void> {
    const clientId = this.openId;
    if (!clientId) throw new Error('No conversation is open.');
    let text: string;
    try {
      const ack = (await this.socket
        .timeout(DECIDE_TIMEOUT_MS)
        .emitWithAck('approval', { clientId, messageId, approvalId, approved })) as ApprovalAck;
      if (ack.ok) return this.status(`You ${approved ? 'approved' : 'denied'} it.`, false);
      const { decision } = ack;
      text =
        ack.error.code === 'APPROVAL_DECIDED' && decision
          ? `Already ${decision.approved ? 'approved' : 'denied'} by ${decision.decidedBy}.`
          : `Not recorded: ${ack.error.message} (${ack.error.code})`;
    } catch {
      text = 'The hub did not answer in time; try again.';
    }
    this.status(text, true);
    throw new Error(text);
  }

  private showControl(control: ConversationControl): void {
    this.control = control;
    const mine = control.control === 'human' && control.operator?.name === this.me;
    const info =
      control.control === 'waiting'
        ? `Waiting ${since(control.since)} for a person${control.reason ? `: ${control.reason}` : ''}${control.summary ? ` — ${control.summary}` : ''}`
        : control.control === 'human'
          ? `${mine ? 'You hold' : `${control.operator?.name ?? 'An operator'} holds`} this conversation; the bot only observes.`
          : 'The bot answers this conversation.';
    $('conversation-info').textContent = info;
    $<HTMLButtonElement>('takeover').disabled = control.control === 'human';
    $<HTMLButtonElement>('release').disabled = control.control === 'bot';
    $<HTMLButtonElement>('send').disabled = !mine;
    const input = $<HTMLTextAreaElement>('reply-text');
    input.disabled = !mine;
    input.placeholder = mine ? 'Reply as yourself (Enter sends, Shift+Enter breaks the line)' : 'Take over to reply';
  }

  private async act(run: () => Promise<unknown>, done: string): Promise<boolean> {
    if (!this.openId) return false;
    try {
      await run();
      this.status(done, false);
      return true;
    } catch (err) {
      if (err instanceof ProblemError && err.code === 'CONVERSATION_HELD') {
        this.status(`${err.holder?.name ?? 'Another operator'} holds this conversation.`, true);
      } else this.status(err instanceof Error ? err.message : String(err), true);
      return false;
    }
  }

  private status(text: string, error: boolean): void {
    const status = $('status');
    status.textContent = text;
    status.dataset.kind = error ? 'error' : 'info';
  }
}

/** The `agentIds` claim of a token, to suggest the bot (the hub checks the token; this only reads it). */
function agentIdsOf(token: string): string[] {
  try {
    const payload = JSON.parse(atob(token.split('.')[1].replace(/-/g, '+').replace(/_/g, '/'))) as { agentIds?: unknown };
    return Array.isArray(payload.agentIds) ? payload.agentIds.filter((a): a is string => typeof a === 'string' && !a.endsWith('*')) : [];
  } catch {
    return [];
  }
}

function start(token: string, agentId: string): void {
  sessionStorage.setItem(STORAGE_KEY, JSON.stringify({ token, agentId }));
  $('signin').hidden = true;
  $('app').hidden = false;
  $('signout').hidden = false;
  $('bot-label').textContent = agentId;
  const app = new Console(new ConsoleApi(token, agentId));
  void app.refresh();
  $('list').focus();
}

$('token').addEventListener('input', () => {
  const agent = $<HTMLInputElement>('agent');
  if (!agent.value) agent.value = agentIdsOf($<HTMLTextAreaElement>('token').value.trim())[0] ?? '';
});
$<HTMLFormElement>('signin').addEventListener('submit', (e) => {
  e.preventDefault();
  start($<HTMLTextAreaElement>('token').value.trim(), $<HTMLInputElement>('agent').value.trim());
});
$('signout').addEventListener('click', () => {
  sessionStorage.removeItem(STORAGE_KEY);
  location.reload();
});
const saved = sessionStorage.getItem(STORAGE_KEY);
if (saved) {
  const { token, agentId } = JSON.parse(saved) as { token: string; agentId: string };
  start(token, agentId);
}
