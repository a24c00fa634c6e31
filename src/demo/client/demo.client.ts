/**
 * The demo page's module script, bundled by the build into `dist/demo/client/demo.js` and served at
 * `./demo/demo.js`: the chat widget an integrator would write on the embed SDK, which it loads from
 * `../sdk/embed.mjs`, the file the hub serves. It shows the conversation as the hub's log has it:
 * after a reload it loads the newest page of history once connected, after a `gap` it loads what was
 * missed, and "Load earlier messages" (or scrolling to the top) pages further back. The user's
 * messages from other tabs appear as theirs. The bot's answers stream in: "thinking…" first, then
 * the text grows, Stop ends it, thumbs rate it, and a reload mid-answer shows the text so far and
 * keeps growing (the SDK resumes it).
 */
import { RelayChat, type BackoffOptions, type HistoryPage } from '../../sdk/embed';
import type { DemoPageSettings } from '../demo.page';
import { codeOf, ConversationView } from './conversation.view';

const byId = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;

const settings = JSON.parse(byId('demo-settings').textContent) as DemoPageSettings;
const scroller = byId('scroller');
const log = byId('log');
const earlier = byId('earlier');
const stateBadge = byId('state');
const botBadge = byId('bot');
const activity = byId('activity');
const stopButton = byId('stop');

// One anonymous demo user per browser: the token route assigns the id on the first call and the
// page hands it back on every refresh, since the hub refuses a refreshed token for another user.
const userKey = 'relay-hub-demo-user';
let user: string | null = null;
try {
  user = localStorage.getItem(userKey);
} catch {
  // Storage blocked: a new user per page load.
}

async function fetchToken(): Promise<string> {
  const res = await fetch('./demo/token', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(user ? { user } : {}),
  });
  if (!res.ok) throw new Error('token route answered ' + res.status);
  const { data } = (await res.json()) as { data: { token: string; user: string } };
  user = data.user;
  try {
    localStorage.setItem(userKey, user);
  } catch {
    // Storage blocked: the id lives as long as the page.
  }
  return data.token;
}

// Reconnect tunables for trying things out (and for the browser tests), e.g. /?backoffCapMs=1000;
// absent or invalid values leave the SDK defaults. pageSize sets how many messages a history page holds.
const query = new URLSearchParams(location.search);
const backoff: BackoffOptions = {};
for (const [param, option] of [
  ['backoffBaseMs', 'baseMs'],
  ['backoffCapMs', 'capMs'],
] as const) {
  const value = Number(query.get(param));
  if (query.has(param) && Number.isFinite(value) && value > 0) backoff[option] = value;
}
const pageSize = Math.min(100, Math.max(1, Math.floor(Number(query.get('pageSize'))) || 30));

const base = new URL('.', location.href);
const chat = new RelayChat({
  url: base.origin,
  path: base.pathname.replace(/\/$/, ''),
  agentId: settings.agentId,
  token: fetchToken,
  backoff,
});
// Handy in the console, and what the browser tests drive.
Object.assign(window, { chat });

const view = new ConversationView({ scroller, log, stopButton }, (id, rating) => chat.feedback(id, rating));

let hasMore = false;
let loading: Promise<void> | null = null;
let loadedOnce = false;
const setHasMore = (more: boolean) => {
  hasMore = more;
  earlier.hidden = !more;
};

/**
 * Brings the screen up to the log: loads pages newest first until one reaches a message already on
 * screen or the log's start. Past a few pages the older part on screen is cut off, so that "Load
 * earlier" goes on from the oldest message shown without a hole.
 */
async function catchUp(): Promise<void> {
  const initial = !loadedOnce;
  let before: string | undefined;
  let page: HistoryPage;
  for (let pages = 1; ; pages++) {
    page = await chat.history(before ? { before, limit: pageSize } : { limit: pageSize });
    const joins = view.shown.size === 0 || page.messages.some((m) => view.shown.has(m.id));
    page.messages.forEach((m) => view.show(m));
    if (joins || !page.hasMore || page.messages.length === 0) break;
    before = page.messages[0].id;
    if (pages === 5) {
      for (const [id, item] of view.shown) {
        if (id < before) {
          item.remove();
          view.shown.delete(id);
        }
      }
      setHasMore(true);
      break;
    }
  }
  loadedOnce = true;
  if (initial) setHasMore(page.hasMore);
  if (initial) view.scrollToBottom();
}

async function loadEarlier(): Promise<void> {
  const oldest = log.querySelector<HTMLElement>('li[data-id]');
  if (!oldest) return;
  const fromBottom = scroller.scrollHeight - scroller.scrollTop;
  const page = await chat.history({ before: oldest.dataset.id, limit: pageSize });
  page.messages.forEach((m) => view.show(m));
  setHasMore(page.hasMore);
  // Keep the message the reader was looking at where it was.
  scroller.scrollTop = scroller.scrollHeight - fromBottom;
}

/** Runs one history task at a time; a failure is a note, and the button stays for another try. */
function load(task: () => Promise<void>): Promise<void> {
  if (loading) return loading;
  loading = task()
    .catch((err) => void view.add('note', 'Could not load the conversation: ' + codeOf(err)))
    .finally(() => {
      loading = null;
    });
  return loading;
}

function setActivity(state: string, label?: string): void {
  const thinking = state !== 'idle';
  activity.hidden = !thinking;
  activity.textContent = thinking ? (label || state) + '…' : '';
  view.setThinking(thinking);
}

chat.on('state', ({ state, code }) => {
  stateBadge.dataset.state = state;
  stateBadge.textContent = code ? state + ' (' + code + ')' : state;
  if (state === 'disconnected') view.add('note', 'Chat ended' + (code ? ': ' + code : '') + '. Reload to start again.');
  // After a (re)load the earlier conversation comes from history; later reconnects get what they
  // missed replayed by the hub before 'connected', or a 'gap'.
  if (state === 'connected' && !loadedOnce) void load(catchUp);
});
// Messages were missed and could not be replayed: load them from history.
chat.on('gap', () => void load(catchUp));
chat.on('agent:status', ({ online }) => {
  botBadge.dataset.online = String(online);
  botBadge.textContent = online ? 'bot online' : 'bot offline';
});
chat.on('message', (m) => {
  view.show(m);
  if (m.author === 'agent') setActivity('idle');
});
chat.on('message:update', ({ id, text }) => view.setText(id, text));
chat.on('message:end', (m) => view.end(m));
chat.on('activity', ({ state, label }) => setActivity(state, label));
// A person took over, or the conversation is back with the bot (docs/handoff.md).
chat.on('control', ({ control, operator }) => {
  if (control === 'human') view.add('note', (operator?.name ?? 'An operator') + ' joined the conversation');
  else if (control === 'bot') view.add('note', "You're back with the assistant");
  else view.add('note', 'Waiting for a person…');
});
stopButton.addEventListener('click', () => {
  chat.stop().catch((err) => {
    if (codeOf(err) !== 'STREAM_NOT_FOUND') view.add('note', 'Could not stop: ' + codeOf(err));
  });
});
chat.on('error', (e) => console.warn('relay-hub demo:', e.code, e.message));

earlier.addEventListener('click', () => void load(loadEarlier));
scroller.addEventListener('scroll', () => {
  if (scroller.scrollTop < 8 && hasMore && !loading) void load(loadEarlier);
});

byId('composer').addEventListener('submit', (event) => {
  event.preventDefault();
  const input = byId<HTMLInputElement>('text');
  const text = input.value.trim();
  if (!text) return;
  input.value = '';
  const item = view.add('me', text);
  item.dataset.status = 'pending';
  chat.send(text).then(
    (ack) => {
      item.dataset.status = 'sent';
      // Already on screen from a history page that raced with the ack: keep one copy.
      view.shown.get(ack.id)?.remove();
      item.dataset.id = ack.id;
      view.shown.set(ack.id, item);
    },
    (err) => {
      item.dataset.status = 'failed';
      item.title = codeOf(err);
      view.add('note', 'Not delivered: ' + codeOf(err));
    },
  );
});

view.add('note', 'Anonymous demo user; tokens last ' + Math.round(settings.tokenTtlSeconds / 60) + ' min and are refreshed in-band.');
