/**
 * The demo page's module script: the chat widget an integrator would write on the embed SDK. It
 * shows the conversation as the hub's log has it: after a reload it loads the newest page of
 * history once connected, after a `gap` it loads what was missed, and "Load earlier messages" (or
 * scrolling to the top) pages further back. The user's messages from other tabs appear as theirs.
 *
 * Plain JavaScript in a string (served inline); no template literals inside, so nothing in it is
 * interpolated by this file.
 */
export const demoScript = String.raw`
import { RelayChat } from './sdk/embed.mjs';

const settings = JSON.parse(document.getElementById('demo-settings').textContent);
const scroller = document.getElementById('scroller');
const log = document.getElementById('log');
const earlier = document.getElementById('earlier');
const stateBadge = document.getElementById('state');
const botBadge = document.getElementById('bot');

// One anonymous demo user per browser: the token route assigns the id on the first call and the
// page hands it back on every refresh, since the hub refuses a refreshed token for another user.
const userKey = 'relay-hub-demo-user';
let user = null;
try {
  user = localStorage.getItem(userKey);
} catch {}

async function fetchToken() {
  const res = await fetch('./demo/token', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(user ? { user } : {}),
  });
  if (!res.ok) throw new Error('token route answered ' + res.status);
  const { data } = await res.json();
  user = data.user;
  try {
    localStorage.setItem(userKey, user);
  } catch {}
  return data.token;
}

const atBottom = () => scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight < 40;

function add(kind, text) {
  const stick = atBottom();
  const item = document.createElement('li');
  item.className = kind;
  item.textContent = text;
  log.append(item);
  if (stick || kind === 'me') scroller.scrollTop = scroller.scrollHeight;
  return item;
}

// Messages of the conversation on screen, by id. The hub's ids are UUIDv7, so comparing them
// orders messages by time: replays, live messages and history pages land in place whatever
// order they arrive in, and none is shown twice.
const shown = new Map();

function show(m) {
  if (shown.has(m.id)) return;
  const stick = atBottom();
  const item = document.createElement('li');
  item.className = m.author === 'user' ? 'me' : 'bot';
  if (m.author === 'user') item.dataset.status = 'sent';
  item.dataset.id = m.id;
  item.textContent = m.text;
  const later = Array.from(log.querySelectorAll('li[data-id]')).find((li) => li.dataset.id > m.id);
  log.insertBefore(item, later || null);
  shown.set(m.id, item);
  if (stick && !later) scroller.scrollTop = scroller.scrollHeight;
}

// Reconnect tunables for trying things out (and for the browser tests), e.g. /?backoffCapMs=1000;
// absent or invalid values leave the SDK defaults. pageSize sets how many messages a history page holds.
const query = new URLSearchParams(location.search);
const backoff = {};
for (const [param, option] of [['backoffBaseMs', 'baseMs'], ['backoffCapMs', 'capMs']]) {
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
window.chat = chat;

let hasMore = false;
let loading = null;
let loadedOnce = false;
const setHasMore = (more) => {
  hasMore = more;
  earlier.hidden = !more;
};

/**
 * Brings the screen up to the log: loads pages newest first until one reaches a message already on
 * screen or the log's start. Past a few pages the older part on screen is cut off, so that "Load
 * earlier" goes on from the oldest message shown without a hole.
 */
async function catchUp() {
  const initial = !loadedOnce;
  let before;
  let page;
  for (let pages = 1; ; pages++) {
    page = await chat.history(before ? { before, limit: pageSize } : { limit: pageSize });
    const joins = shown.size === 0 || page.messages.some((m) => shown.has(m.id));
    page.messages.forEach(show);
    if (joins || !page.hasMore || page.messages.length === 0) break;
    before = page.messages[0].id;
    if (pages === 5) {
      for (const [id, item] of shown) if (id < before) (item.remove(), shown.delete(id));
      setHasMore(true);
      break;
    }
  }
  loadedOnce = true;
  if (initial) setHasMore(page.hasMore);
  if (initial) scroller.scrollTop = scroller.scrollHeight;
}

async function loadEarlier() {
  const oldest = log.querySelector('li[data-id]');
  if (!oldest) return;
  const fromBottom = scroller.scrollHeight - scroller.scrollTop;
  const page = await chat.history({ before: oldest.dataset.id, limit: pageSize });
  page.messages.forEach(show);
  setHasMore(page.hasMore);
  // Keep the message the reader was looking at where it was.
  scroller.scrollTop = scroller.scrollHeight - fromBottom;
}

/** Runs one history task at a time; a failure is a note, and the button stays for another try. */
function load(task) {
  if (loading) return loading;
  loading = task()
    .catch((err) => add('note', 'Could not load the conversation: ' + err.code))
    .finally(() => {
      loading = null;
    });
  return loading;
}

chat.on('state', ({ state, code }) => {
  stateBadge.dataset.state = state;
  stateBadge.textContent = code ? state + ' (' + code + ')' : state;
  if (state === 'disconnected') add('note', 'Chat ended' + (code ? ': ' + code : '') + '. Reload to start again.');
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
chat.on('message', show);
chat.on('error', (e) => console.warn('relay-hub demo:', e.code, e.message));

earlier.addEventListener('click', () => void load(loadEarlier));
scroller.addEventListener('scroll', () => {
  if (scroller.scrollTop < 8 && hasMore && !loading) void load(loadEarlier);
});

document.getElementById('composer').addEventListener('submit', (event) => {
  event.preventDefault();
  const input = document.getElementById('text');
  const text = input.value.trim();
  if (!text) return;
  input.value = '';
  const item = add('me', text);
  item.dataset.status = 'pending';
  chat.send(text).then(
    (ack) => {
      item.dataset.status = 'sent';
      // Already on screen from a history page that raced with the ack: keep one copy.
      shown.get(ack.id)?.remove();
      item.dataset.id = ack.id;
      shown.set(ack.id, item);
    },
    (err) => {
      item.dataset.status = 'failed';
      item.title = err.code;
      add('note', 'Not delivered: ' + err.code);
    },
  );
});

add('note', 'Anonymous demo user; tokens last ' + Math.round(settings.tokenTtlSeconds / 60) + ' min and are refreshed in-band.');
`;
