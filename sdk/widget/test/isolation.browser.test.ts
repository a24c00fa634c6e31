import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '../../../test/browser/chromium';
import { startHub, type TestHub } from '../../../test/helpers/hub';
import { online, screenshot, w, widgetPage } from './widget-page';

/** A page that does its worst to everything on it, the widget's host element included. */
const HOSTILE = `
* { all: unset !important; }
html, body, div, span, p, h1, button, a, ul, li, section, header, form, textarea { margin: 0; padding: 0; border: 0; font-size: 100%; font: inherit; vertical-align: baseline; }
button { background: #f0f !important; color: #ff0 !important; font-size: 30px !important; padding: 20px !important; border-radius: 0 !important; }
div { border: 3px solid lime !important; margin: 10px !important; display: block !important; line-height: 3 !important; }
p { font: 40px/1 serif !important; color: red !important; letter-spacing: 4px !important; }
body > * { position: relative !important; transform: translateX(40px) rotate(3deg) !important; filter: blur(1px) !important; opacity: .5 !important; }
relay-chat { display: none !important; zoom: 2 !important; }
svg, path { fill: red !important; stroke: blue !important; }
`;
const BODY = '<main><h1>Shop</h1><p>Paragraph</p><div id="box">Box</div><button id="buy">Buy</button></main>';

/** Fixed content, the same on both pages: a user's message and an answer with markdown. */
async function fill(page: Page): Promise<void> {
  await page.evaluate(() => {
    const el = document.querySelector('relay-chat') as unknown as { transcript: { upsert(m: object): void } };
    el.transcript.upsert({ id: 'u1', author: 'user', text: 'What does it cost?' });
    el.transcript.upsert({
      id: 'b1',
      author: 'agent',
      text: '### Prices\n\nThe **basic** plan:\n\n| Plan | Price |\n|---|---|\n| Basic | 5 € |\n\n- one\n- two\n\n```\nplain code\n```',
    });
  });
  await w(page, '.msg.bot .actions').waitFor();
}

/** The panel's pixels, inside its rounded corners (the page's own background shows in those). */
async function panelShot(page: Page): Promise<Buffer> {
  const box = (await w(page, '.panel').boundingBox())!;
  return page.screenshot({ clip: { x: box.x + 12, y: box.y + 12, width: box.width - 24, height: box.height - 24 } });
}

/** Computed styles of the host page's own elements that a leaking style sheet would change. */
function hostStyles(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const id of ['h1', 'p', '#box', '#buy', 'main']) {
    const cs = getComputedStyle(document.querySelector(id)!);
    out[id] = ['display', 'font', 'color', 'background-color', 'margin', 'padding', 'border', 'box-sizing', 'outline', 'line-height']
      .map((k) => cs.getPropertyValue(k))
      .join('|');
  }
  return out;
}

describe('the widget in Chromium: isolated from its host page both ways', () => {
  let browser: Browser;
  let hub: TestHub;

  beforeAll(async () => {
    browser = await launchChromium();
    hub = await startHub();
    await hub.agent('iso-bot');
  });
  afterAll(async () => {
    await hub?.close();
    await browser?.close();
  });

  it('looks the same on a hostile page as on a plain one', async () => {
    const shots: Buffer[] = [];
    for (const [name, css] of [
      ['plain', ''],
      ['hostile', HOSTILE],
    ]) {
      const { context, page } = await widgetPage(browser, hub, 'iso-bot', { css, body: BODY, data: { open: '', title: 'Shop help' } });
      await online(page);
      await fill(page);
      await w(page, 'textarea').focus();
      await screenshot(page, `isolation-${name}.png`);
      shots.push(await panelShot(page));
      // The launcher is where it belongs and visible.
      const launcher = (await w(page, '.launcher').boundingBox())!;
      expect(launcher).toMatchObject({ width: 56, height: 56, x: 1024 - 24 - 56, y: 768 - 24 - 56 });
      await context.close();
    }
    expect(shots[1].equals(shots[0])).toBe(true);
  });

  it("changes none of the host page's elements", async () => {
    for (const css of ['', HOSTILE]) {
      const { context, page } = await widgetPage(browser, hub, 'iso-bot', { css, body: BODY, data: { 'agent-id': 'none' } });
      // The tag above mounted nothing (its bot is not ours to test); measure, then mount one.
      const before = await page.evaluate(hostStyles);
      await page.evaluate(() => {
        const el = document.createElement('relay-chat');
        el.setAttribute('agent-id', 'iso-bot');
        el.setAttribute('token-url', '/chat-token');
        el.setAttribute('open', '');
        document.body.appendChild(el);
      });
      await page.waitForFunction(() => document.querySelectorAll('relay-chat').length === 2);
      await page.waitForFunction(() =>
        [...document.querySelectorAll('relay-chat')].some((el) => el.shadowRoot?.querySelector('.presence')?.textContent === 'Online'),
      );
      expect(await page.evaluate(hostStyles)).toEqual(before);
      // Nothing was added to the page's own style sheets.
      expect(await page.evaluate(() => document.styleSheets.length)).toBe(1);
      await context.close();
    }
  });
});
