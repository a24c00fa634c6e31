/**
 * The demo page's module script: the chat widget an integrator would write on the embed SDK. It
 * shows the conversation as the hub's log has it: after a reload it loads the newest page of
 * history once connected, after a `gap` it loads what was missed, and "Load earlier messages" (or
 * scrolling to the top) pages further back. The user's messages from other tabs appear as theirs.
 * The bot's answers stream in: "thinking…" first, then the text grows, Stop ends it, thumbs rate it,
 * and a reload mid-answer shows the text so far and keeps growing (the SDK resumes it).
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
const activity = document.getElementById('activity');
const stopButton = document.getElementById('stop');

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

// Answers being streamed, by id; Stop shows while one is open or the bot is thinking.
const streaming = new Set();
let thinking = false;
const updateStop = () => {
  stopButton.hidden = streaming.size === 0 && !thinking;
};

function show(m) {
  const existing = shown.get(m.id);
  if (existing) {
    // A snapshot of an answer already on screen (e.g. a history page got there first).
    if (m.streaming) setText(m.id, m.text);
    return;
  }
  const stick = atBottom();
  const item = document.createElement('li');
  item.dataset.id = m.id;
  if (m.author === 'user') {
    item.className = 'me';
    item.dataset.status = 'sent';
    item.textContent = m.text;
  } else {
    // The text in a span of its own, so the thumbs beside it add nothing to the message's text.
    item.className = 'bot';
    const text = document.createElement('span');
    text.className = 'text';
    text.textContent = m.text;
    item.append(text);
    if (m.streaming) {
      item.dataset.streaming = 'true';
      streaming.add(m.id);
      updateStop();
    } else finish(item, m);
  }
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

function setText(id, text) {
  const item = shown.get(id);
  if (!item) return;
  const stick = atBottom();
  item.querySelector('.text').textContent = text;
  if (stick) scroller.scrollTop = scroller.scrollHeight;
}

/** A bot message is final: how it ended (unless complete) and the thumbs to rate it. */
function finish(item, m) {
  delete item.dataset.streaming;
  streaming.delete(m.id);
  updateStop();
  if (m.status && m.status !== 'complete') item.dataset.status = m.status;
  if (item.querySelector('.thumbs')) return;
  const thumbs = document.createElement('span');
  thumbs.className = 'thumbs';
  for (const [rating, label] of [['up', 'Good answer'], ['down', 'Bad answer']]) {
    const button = document.createElement('button');
    button.type = 'button';
    button.className = rating;
    button.setAttribute('aria-label', label);
    button.setAttribute('aria-pressed', String(m.feedback?.rating === rating));
    button.addEventListener('click', () => {
      // Pressing the chosen thumb again withdraws the rating.
      const next = button.getAttribute('aria-pressed') === 'true' ? null : rating;
      chat.feedback(item.dataset.id, next).then(
        () => {
          for (const b of thumbs.children) b.setAttribute('aria-pressed', String(b.className === next));
        },
        (err) => add('note', 'Feedback not saved: ' + err.code),
      );
    });
    thumbs.append(button);
  }
  item.append(thumbs);
}

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
chat.on('message', (m) => {
  show(m);
  if (m.author === 'agent') setActivity('idle');
});
chat.on('message:update', ({ id, text }) => setText(id, text));
chat.on('message:end', (m) => {
  if (!shown.has(m.id)) show(m);
  setText(m.id, m.text);
  finish(shown.get(m.id), m);
});
function setActivity(state, label) {
  thinking = state !== 'idle';
  activity.hidden = !thinking;
  activity.textContent = thinking ? (label || state) + '…' : '';
  updateStop();
}
chat.on('activity', ({ state, label }) => setActivity(state, label));
stopButton.addEventListener('click', () => {
  chat.stop().catch((err) => {
    if (err.code !== 'STREAM_NOT_FOUND') add('note', 'Could not stop: ' + err.code);
  });
});
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
