import type { Browser, Page } from 'playwright-core';
import type { RelayAgent } from '../../../src/sdk/agent';
import { launchChromium } from '../../../test/browser/chromium';
import { startHub, type TestHub } from '../../../test/helpers/hub';
import { EVERY_PART } from './parts-fixture';
import { online, screenshot, w, widgetPage, type WidgetPageOptions } from './widget-page';

const AXE = require.resolve('axe-core/axe.min.js');

interface AxeViolation {
  id: string;
  impact: string | null;
  nodes: { target: unknown[] }[];
}

/** Serious and critical axe-core violations inside the widget (WCAG 2.2 A and AA rules and best practices). */
async function violations(page: Page): Promise<string[]> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.addScriptTag({ path: AXE });
  const found = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(context: object, options: object): Promise<{ violations: AxeViolation[] }> } }).axe;
    const { violations } = await axe.run(
      { include: [['relay-chat']] },
      { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa', 'best-practice'] } },
    );
    return violations;
  });
  return found
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${JSON.stringify(v.nodes.map((n) => n.target))}`);
}

/** The element focused now, through shadow roots: its class and accessible name. */
function focused(page: Page): Promise<string> {
  return page.evaluate(() => {
    let a: Element | null = document.activeElement;
    while (a?.shadowRoot?.activeElement) a = a.shadowRoot.activeElement;
    return `${a?.tagName.toLowerCase()}.${a?.className}|${a?.getAttribute('aria-label') ?? ''}`;
  });
}

describe('the widget in Chromium: everyone can use it', () => {
  let browser: Browser;
  let hub: TestHub;
  let agent: RelayAgent;
  let release: (() => void) | undefined;

  beforeAll(async () => {
    browser = await launchChromium();
    hub = await startHub();
    agent = await hub.agent('a11y-bot');
    // Streams a long answer in pieces until released or stopped.
    agent.onMessage(async (m, { signal }) => {
      const s = await agent.stream(m.from, { replyTo: m.id });
      const held = new Promise<void>((r) => (release = r));
      await s.write('## Answer\n\nA first paragraph with `code`.\n\n');
      await Promise.race([
        held,
        new Promise((r) => signal.addEventListener('abort', r)),
        new Promise((r) => s.signal.addEventListener('abort', r)),
      ]);
      if (!s.signal.aborted && !signal.aborted)
        await s.end({ text: '## Answer\n\nA first paragraph with `code`.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\nDone.' });
    });
  });
  afterAll(async () => {
    await hub?.close();
    await browser?.close();
  });

  const states: [string, WidgetPageOptions][] = [
    ['light, 1024×768', {}],
    ['phone, 375×667', { viewport: { width: 375, height: 667 } }],
    ['dark', { colorScheme: 'dark', data: { theme: 'dark' } }],
    ['dark from the system', { colorScheme: 'dark' }],
    ['right to left', { data: { lang: 'ar' } }],
  ];

  it.each(states)(
    'axe finds nothing serious or critical closed, open, streaming and with every part (%s)',
    async (name, options) => {
      const { context, page } = await widgetPage(browser, hub, 'a11y-bot', { sub: `a11y-${name}`, ...options });
      try {
        const slug = name.replace(/[^a-z0-9]+/gi, '-');
        await online(page);
        expect({ closed: await violations(page) }).toEqual({ closed: [] });
        await w(page, '.launcher').click();
        await w(page, 'textarea').waitFor();
        expect({ open: await violations(page) }).toEqual({ open: [] });
        await w(page, 'textarea').fill('Tell me more');
        await w(page, 'textarea').press('Enter');
        await w(page, '.msg.bot[data-streaming] h4').waitFor();
        expect({ streaming: await violations(page) }).toEqual({ streaming: [] });
        await screenshot(page, `a11y-${slug}-streaming.png`);
        release?.();
        await w(page, '.msg.bot:not([data-streaming]) .actions').last().waitFor();
        await page.evaluate(
          (m) => (document.querySelector('relay-chat') as unknown as { transcript: { upsert(m: object): void } }).transcript.upsert(m),
          EVERY_PART,
        );
        await w(page, 'details.tool summary').first().click();
        await w(page, '.msg.bot .actions button[data-rating=down]').first().click();
        expect({ parts: await violations(page) }).toEqual({ parts: [] });
        await screenshot(page, `a11y-${slug}-parts.png`);
      } finally {
        await context.close();
      }
    },
    60_000,
  );

  it('is usable with the keyboard alone: open, send, stop, rate, close', async () => {
    const { context, page } = await widgetPage(browser, hub, 'a11y-bot', {
      sub: 'keyboard-user',
      body: '<main><h1>Site</h1><a href="#top">A link of the site</a></main>',
    });
    try {
      await online(page);
      await page.keyboard.press('Tab');
      expect(await focused(page)).toBe('a.|');
      await page.keyboard.press('Tab');
      expect(await focused(page)).toBe('button.launcher|Open chat');
      await page.keyboard.press('Enter');
      expect(await focused(page)).toBe('textarea.|Write a message…');
      await page.keyboard.type('Hello there');
      await page.keyboard.press('Enter');
      await w(page, '.msg.bot[data-streaming] h4').waitFor();
      // While the bot answers, the Send button is Stop, one Tab away.
      await page.keyboard.press('Tab');
      expect(await focused(page)).toBe('button.send stop|Stop');
      await page.keyboard.press('Enter');
      await w(page, '.msg.bot .status:text("Stopped")').waitFor();
      // Send is disabled with nothing typed, so focus went back to the text box.
      expect(await focused(page)).toBe('textarea.|Write a message…');
      // Back into the transcript: the answer's thumbs.
      await page.keyboard.press('Shift+Tab');
      expect(await focused(page)).toBe('button.icon-btn|Bad answer');
      await page.keyboard.press('Shift+Tab');
      expect(await focused(page)).toBe('button.icon-btn|Good answer');
      await page.keyboard.press('Enter');
      await w(page, '.actions [data-rating=up][aria-pressed=true]').waitFor();
      await screenshot(page, 'keyboard-rated.png');
      await page.keyboard.press('Escape');
      await w(page, '.panel').waitFor({ state: 'hidden' });
      expect(await focused(page)).toBe('button.launcher|Open chat');
    } finally {
      await context.close();
    }
  }, 60_000);
});
