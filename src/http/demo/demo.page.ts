/** Settings the page reads at start-up. */
export interface DemoPageSettings {
  agentId: string;
  tokenTtlSeconds: number;
}

/**
 * The demo chat page: a small widget built on the embed SDK as an integrator would use it. Every
 * URL is relative to the page, so it also works when a proxy serves the hub under a path prefix.
 */
export function demoPage(settings: DemoPageSettings): string {
  // JSON in a non-executed script element; escaping `<` keeps the data from closing the element.
  const json = JSON.stringify(settings).replace(/</g, '\\u003c');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>relay-hub demo</title>
<style>
  :root { font: 15px/1.4 system-ui, sans-serif; color: #1d2330; background: #eef1f5; }
  body { margin: 0; min-height: 100vh; display: grid; place-items: center; }
  main { width: min(420px, 100vw); height: min(640px, 100vh); display: flex; flex-direction: column;
    background: #fff; border-radius: 12px; box-shadow: 0 6px 24px #0002; overflow: hidden; }
  header { padding: 12px 16px; background: #1d2330; color: #fff; display: flex; gap: 8px; align-items: baseline; }
  header h1 { font-size: 16px; margin: 0; flex: 1; }
  .badge { font-size: 12px; padding: 2px 8px; border-radius: 999px; background: #fff2; }
  .badge[data-state="connected"], .badge[data-online="true"] { background: #2e7d32; }
  .badge[data-state="disconnected"], .badge[data-online="false"] { background: #b23b3b; }
  #log { flex: 1; overflow-y: auto; padding: 12px; display: flex; flex-direction: column; gap: 6px; margin: 0; list-style: none; }
  #log li { max-width: 80%; padding: 6px 10px; border-radius: 10px; white-space: pre-wrap; overflow-wrap: anywhere; }
  #log li.bot { align-self: flex-start; background: #eef1f5; }
  #log li.me { align-self: flex-end; background: #d7e7ff; }
  #log li.me[data-status="pending"] { opacity: .6; }
  #log li.me[data-status="failed"] { background: #f8d7d7; }
  #log li.note { align-self: center; text-align: center; font-size: 12px; color: #667; background: none; }
  form { display: flex; gap: 8px; padding: 12px; border-top: 1px solid #e3e6eb; }
  input { flex: 1; font: inherit; padding: 8px 10px; border: 1px solid #c9ced6; border-radius: 8px; }
  button { font: inherit; padding: 8px 14px; border: 0; border-radius: 8px; background: #1d2330; color: #fff; }
</style>
</head>
<body>
<main>
  <header>
    <h1>relay-hub demo</h1>
    <span id="bot" class="badge" title="bot status">bot …</span>
    <span id="state" class="badge" title="connection">connecting</span>
  </header>
  <ol id="log" aria-live="polite"></ol>
  <form id="composer" autocomplete="off">
    <input id="text" name="text" placeholder="Say something to the echo bot" maxlength="2000" required>
    <button type="submit">Send</button>
  </form>
</main>
<script id="demo-settings" type="application/json">${json}</script>
<script type="module">
import { RelayChat } from './sdk/embed.mjs';

const settings = JSON.parse(document.getElementById('demo-settings').textContent);
const log = document.getElementById('log');
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

function add(kind, text) {
  const item = document.createElement('li');
  item.className = kind;
  item.textContent = text;
  log.append(item);
  log.scrollTop = log.scrollHeight;
  return item;
}

// Reconnect tunables for trying things out (and for the browser tests), e.g. /?backoffCapMs=1000;
// absent or invalid values leave the SDK defaults.
const query = new URLSearchParams(location.search);
const backoff = {};
for (const [param, option] of [['backoffBaseMs', 'baseMs'], ['backoffCapMs', 'capMs']]) {
  const value = Number(query.get(param));
  if (query.has(param) && Number.isFinite(value) && value > 0) backoff[option] = value;
}

const base = new URL('.', location.href);
const chat = new RelayChat({
  url: base.origin,
  path: base.pathname.replace(/\\/$/, ''),
  agentId: settings.agentId,
  token: fetchToken,
  backoff,
});
// Handy in the console, and what the browser tests drive.
window.chat = chat;

chat.on('state', ({ state, code }) => {
  stateBadge.dataset.state = state;
  stateBadge.textContent = code ? state + ' (' + code + ')' : state;
  if (state === 'disconnected') add('note', 'Chat ended' + (code ? ': ' + code : '') + '. Reload to start again.');
});
chat.on('agent:status', ({ online }) => {
  botBadge.dataset.online = String(online);
  botBadge.textContent = online ? 'bot online' : 'bot offline';
});
chat.on('message', (m) => add('bot', m.text));
chat.on('error', (e) => console.warn('relay-hub demo:', e.code, e.message));

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
      item.dataset.id = ack.id;
    },
    (err) => {
      item.dataset.status = 'failed';
      item.title = err.code;
      add('note', 'Not delivered: ' + err.code);
    },
  );
});

add('note', 'Anonymous demo user; tokens last ' + Math.round(settings.tokenTtlSeconds / 60) + ' min and are refreshed in-band.');
</script>
</body>
</html>
`;
}
