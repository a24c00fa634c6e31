import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { startHub, type TestHub } from '../helpers/hub';
import { mintToken } from '../helpers/tokens';
import { launchChromium } from './chromium';

const ROOT = join(__dirname, '..', '..');

/** The README's first widget, as written: opened from the disk, pointed at the test's hub, with a minted token pasted in. */
function readmeWidget(url: string, token: string): string {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const html = /```html\n([\s\S]*?)```/.exec(readme.slice(readme.indexOf('## Your first browser widget')))![1];
  expect(html).toContain('PASTE_THE_TOKEN');
  return html.replaceAll('http://localhost:3000', url).replace('PASTE_THE_TOKEN', token);
}

describe("the README's first browser widget in Chromium", () => {
  let browser: Browser;
  let hub: TestHub;
  let page: Page;
  let dir: string;

  beforeAll(async () => {
    browser = await launchChromium();
    hub = await startHub({ DEMO_ENABLED: 'false' });
    dir = mkdtempSync(join(tmpdir(), 'relay-readme-widget-'));
  });
  afterAll(async () => {
    await page?.context().close();
    await browser?.close();
    await hub?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('opened from the disk, chats with the README’s bot: the message goes out and the reply shows', async () => {
    // The README's bot: an echo that answers "You said: …".
    const bot = await hub.agent('my-bot');
    bot.onMessage(async (m) => {
      await bot.reply(m.from, `You said: ${m.text}`, undefined, m.id);
    });
    // What `npm run -s token -- --sub alice --agent-id my-bot --expires-in 8h` prints.
    const token = mintToken({ sub: 'alice', agentIds: ['my-bot'] });
    const file = join(dir, 'hello.html');
    writeFileSync(file, readmeWidget(hub.url, token));

    page = await browser.newPage();
    const failed: string[] = [];
    page.on('response', (res) => res.status() >= 400 && failed.push(`${res.status()} ${res.url()}`));
    page.on('pageerror', (err) => failed.push(err.message));
    await page.goto(`file://${file}`);
    // The one tag mounted the widget, open, titled, talking to the hub the script came from.
    await page.locator('relay-chat .panel[data-online="true"]').waitFor();
    expect(await page.locator('relay-chat .title').textContent()).toBe('my-bot');
    await page.fill('relay-chat textarea', 'hello from the README');
    await page.press('relay-chat textarea', 'Enter');
    await page.locator('relay-chat .msg.bot:not([data-streaming]) .md', { hasText: 'You said: hello from the README' }).waitFor();
    expect(await page.locator('relay-chat .msg .bubble, relay-chat .msg .md').allTextContents()).toEqual([
      'hello from the README',
      'You said: hello from the README',
    ]);
    expect(failed).toEqual([]);
    bot.close();
  });
});
