/**
 * The demo page's module script, bundled by the build into `dist/demo/client/demo.js` and served at
 * `./demo/demo.js`: the chat widget on a plain page, loaded from `../sdk/widget.mjs`, the file the
 * hub serves (docs/widget.md). What it adds is the demo's own token: one anonymous user per browser,
 * whose id the token route assigns on the first call and the page hands back on every refresh (the
 * hub refuses a refreshed token for another user).
 */
import { defineRelayChat, type RelayChatElement } from '../../../sdk/widget/src';
import type { DemoPageSettings } from '../demo.page';

const settings = JSON.parse(document.getElementById('demo-settings')!.textContent) as DemoPageSettings;

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
const backoff: Record<string, number> = {};
for (const [param, option] of [
  ['backoffBaseMs', 'baseMs'],
  ['backoffCapMs', 'capMs'],
] as const) {
  const value = Number(query.get(param));
  if (query.has(param) && Number.isFinite(value) && value > 0) backoff[option] = value;
}

// Every URL is relative to the page, so the demo also works under a proxy's path prefix.
const base = new URL('.', location.href);
defineRelayChat({ url: base.origin });
const widget = document.createElement('relay-chat') as RelayChatElement;
widget.getToken = fetchToken;
widget.chatOptions = { backoff };
for (const [name, value] of Object.entries({
  'agent-id': settings.agentId,
  path: base.pathname.replace(/\/$/, ''),
  title: 'relay-hub demo',
  greeting:
    'Hello! I echo what you write, streamed word by word. Ask me for "parts" to see every kind of answer part, or for a "human" to reach a person.',
  'page-size': query.get('pageSize') ?? '30',
  open: '',
})) {
  widget.setAttribute(name, value);
}
document.body.appendChild(widget);
