import { mkdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { mintToken } from '../../../test/helpers/tokens';
import type { TestHub } from '../../../test/helpers/hub';

/** Where the widget's browser tests leave screenshots for people to look at (gitignored). */
export const ARTIFACTS = resolve(__dirname, '../../../test-artifacts/widget');

export interface WidgetPageOptions {
  /** Attributes of the script tag's `data-*` (agent-id is set). */
  data?: Record<string, string>;
  /** CSS of the host page. */
  css?: string;
  /** Markup of the host page before the widget. */
  body?: string;
  viewport?: { width: number; height: number };
  colorScheme?: 'light' | 'dark';
  reducedMotion?: 'reduce' | 'no-preference';
  /** The token's user. */
  sub?: string;
  /** Open the page in this browser context (another tab of the same browser) instead of a new one. */
  context?: BrowserContext;
}

/**
 * A plain host page on the hub's origin with the widget's one tag; tokens come from Node through
 * `getToken`-like exposure (`data-token-url` points at a route the page answers itself).
 */
export async function widgetPage(
  browser: Browser,
  hub: TestHub,
  agentId: string,
  options: WidgetPageOptions = {},
): Promise<{ context: BrowserContext; page: Page; reload(): Promise<void> }> {
  const context =
    options.context ??
    (await browser.newContext({
      viewport: options.viewport ?? { width: 1024, height: 768 },
      colorScheme: options.colorScheme ?? 'light',
      reducedMotion: options.reducedMotion ?? 'reduce',
      permissions: ['clipboard-read', 'clipboard-write'],
    }));
  const page = await context.newPage();
  const sub = options.sub ?? 'widget-user';
  // The integrator's backend: GET /chat-token answers { token } for the signed-in user.
  await page.route(`${hub.url}/chat-token`, (route) =>
    route.fulfill({
      status: 200,
      contentType: 'application/json',
      body: JSON.stringify({ token: mintToken({ sub, agentIds: [agentId] }) }),
    }),
  );
  // A document the hub itself served (so Chromium knows the page's address space), then the host
  // page's markup written into it: same origin as the hub, as the demo page is.
  const load = async () => {
    await page.goto(`${hub.url}/health/live`);
    await page.setContent(hostHtml(agentId, options));
    await page.waitForFunction(() => customElements.get('relay-chat') !== undefined);
  };
  await load();
  // A reload of the host page: a new document on the same origin, in the same tab (sessionStorage kept).
  return { context, page, reload: load };
}

export function hostHtml(agentId: string, options: WidgetPageOptions = {}): string {
  const data = { 'agent-id': agentId, 'token-url': '/chat-token', ...options.data };
  const attrs = Object.entries(data)
    .map(([k, v]) => ` data-${k}="${v.replace(/"/g, '&quot;')}"`)
    .join('');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Host page</title><style>${options.css ?? ''}</style></head>
<body>${options.body ?? '<main><h1>A host page</h1><p>Some content of the site.</p></main>'}
<script src="/sdk/widget.js"${attrs} async></script></body></html>`;
}

/** Waits until the widget's connection is up and its history loaded. */
export async function online(page: Page): Promise<void> {
  await page.waitForFunction(() => {
    const root = document.querySelector('relay-chat')?.shadowRoot;
    return root?.querySelector('.presence')?.textContent === 'Online';
  });
}

/** A locator inside the widget (Playwright's CSS pierces open shadow roots). */
export const w = (page: Page, selector: string) => page.locator(`relay-chat ${selector}`);

export async function screenshot(page: Page, name: string): Promise<string> {
  await mkdir(ARTIFACTS, { recursive: true });
  const file = resolve(ARTIFACTS, name);
  await page.screenshot({ path: file });
  return file;
}
