import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchChromium } from '../../../test/browser/chromium';
import { startHub, type TestHub } from '../../../test/helpers/hub';
import type { AgentApproval } from '../../../src/protocol';
import { EVERY_PART } from './parts-fixture';
import { online, screenshot, w, widgetPage } from './widget-page';

type El = HTMLElement & { transcript: { upsert(m: object): void }; registerRenderer(name: string, r: (d: unknown) => Node): void };

/**
 * Parts rendered from message objects fed to the widget's transcript (the hub's side of parts is
 * built elsewhere; these are the shapes `message.parts` carries): one component per part type.
 */
describe('the widget in Chromium: answers in parts', () => {
  let browser: Browser;
  let hub: TestHub;
  let context: BrowserContext;
  let page: Page;

  beforeAll(async () => {
    browser = await launchChromium();
    hub = await startHub();
  });
  afterAll(async () => {
    await hub?.close();
    await browser?.close();
  });
  beforeEach(async () => {
    context = await browser.newContext({ viewport: { width: 480, height: 900 }, reducedMotion: 'reduce' });
    page = await context.newPage();
    await page.goto(`${hub.url}/health/live`);
    await page.setContent('<!doctype html><html lang="en"><body style="margin:0"><div id="box" style="height:900px"></div></body></html>');
    await page.addScriptTag({ url: '/sdk/widget.mjs', type: 'module' });
    await page.waitForFunction(() => customElements.get('relay-chat') !== undefined);
    // Inline, with no bot: this page feeds the transcript itself.
    await page.evaluate(() => {
      const el = document.createElement('relay-chat') as El;
      el.setAttribute('mode', 'inline');
      el.setAttribute('title', 'Weather');
      document.getElementById('box')!.appendChild(el);
      el.registerRenderer('weather-card', (d) => {
        const card = document.createElement('p');
        const { city, tempC } = d as { city: string; tempC: number };
        card.textContent = `${city}: ${tempC} °C`;
        return card;
      });
    });
  });
  afterEach(async () => {
    await context?.close();
  });

  const upsert = (m: object) => page.evaluate((m) => (document.querySelector('relay-chat') as El).transcript.upsert(m), m);

  it('shows every part type with its component', async () => {
    await upsert({ id: 'q', author: 'user', text: 'Weather in Paris?' });
    await upsert(EVERY_PART);
    await screenshot(page, 'parts-every-type.png');
    // Reasoning: collapsed.
    expect(await w(page, '.reasoning').getAttribute('open')).toBeNull();
    expect(await w(page, '.reasoning summary').innerText()).toBe('Thought');
    // Tool steps: name and state; input and output only on demand.
    const tools = w(page, 'details.tool');
    expect(await tools.nth(0).locator('summary').innerText()).toMatch(/Weather lookup\s*Done/);
    expect(await tools.nth(1).locator('summary').innerText()).toMatch(/search\s*Failed/);
    expect(await w(page, 'pre.json').count()).toBe(0);
    await tools.nth(0).locator('summary').click();
    expect(JSON.parse(await tools.nth(0).locator('pre.json').first().innerText())).toEqual({ city: 'Paris' });
    expect(JSON.parse(await tools.nth(0).locator('pre.json').nth(1).innerText())).toEqual({ tempC: 18, sky: 'clear' });
    await tools.nth(1).locator('summary').click();
    expect(await tools.nth(1).locator('.error').innerText()).toBe('The search service timed out.');
    // Approval: a card with Approve and Deny (disabled: this page has no chat to decide through).
    expect(await w(page, '.approval').getAttribute('aria-label')).toBe('Book a table');
    expect(await w(page, '.approval button').allInnerTexts()).toEqual(['Approve', 'Deny']);
    // Text as markdown.
    expect(await w(page, '.md strong').innerText()).toBe('mild');
    // Data: the integrator's renderer; a name without one shows nothing.
    expect(await w(page, '.data').allInnerTexts()).toEqual(['Paris: 18 °C']);
    // Sources: numbered chips with title and domain.
    expect(await w(page, '.sources li').allInnerTexts()).toEqual(['1\nMétéo Paris\nmeteo.example', '2\nForecast\nforecast.example']);
    // Files: the image as a preview, the PDF as a card; the javascript: one not at all.
    expect(await w(page, 'a.image img').getAttribute('src')).toBe('https://files.example/paris.png');
    expect(await w(page, 'a.file').allInnerTexts()).toEqual([expect.stringMatching(/^report\.pdf\s*240\.0 KB$/)]);
    expect(await w(page, 'a[href^="javascript:"]').count()).toBe(0);
    // Suggestions: chips above the composer; choosing one sends it and they go.
    expect(await w(page, '.chips .chip').allInnerTexts()).toEqual(['And tomorrow?', 'In Lyon']);
    await w(page, '.chips .chip').nth(1).click();
    expect(await w(page, '.msg.user .bubble').last().innerText()).toBe('What is the weather in Lyon?');
    expect(await w(page, '.chips').isHidden()).toBe(true);
  });

  it('decides an approval through chat.approve, and shows a decision made elsewhere', async () => {
    await upsert(EVERY_PART);
    // A stand-in chat records the call (the last test goes through a real hub).
    await page.evaluate(() => {
      const w = window as unknown as { calls: unknown[] };
      w.calls = [];
      (document.querySelector('relay-chat') as unknown as { chat: object }).chat = {
        approve: (...args: unknown[]) => {
          w.calls.push(args);
          return Promise.resolve({ ok: true });
        },
        close() {},
      };
    });
    await w(page, '.approval button:text("Approve")').click();
    expect(await page.evaluate(() => (window as unknown as { calls: unknown[] }).calls)).toEqual([['parts-1', 'appr-1', true]]);
    // The hub then sends the part as decided (in every tab): the card says who decided.
    const decided = structuredClone(EVERY_PART);
    decided.parts[3] = {
      ...decided.parts[3],
      state: 'approval-responded',
      approval: { id: 'appr-1', approved: true },
    };
    await upsert(decided);
    expect(await w(page, '.approval .decided').innerText()).toBe('Approved by you');
    expect(await w(page, '.approval button:text("Approve")').count()).toBe(0);
  });

  it('grows parts while streaming: reasoning says it is thinking, then how long it thought', async () => {
    const base = { id: 's1', author: 'agent', text: '', streaming: true };
    await upsert({ ...base, parts: [{ type: 'reasoning', text: 'Let me think' }] });
    expect(await w(page, '.reasoning summary').innerText()).toBe('Thinking…');
    await page.waitForTimeout(1200); // the thought's duration is what this measures
    await upsert({
      ...base,
      parts: [
        { type: 'reasoning', text: 'Let me think about it.' },
        { type: 'tool', toolCallId: 'c', toolName: 'lookup', state: 'input-available', input: {} },
      ],
    });
    expect(await w(page, '.reasoning summary').innerText()).toMatch(/^Thought for [12] s$/);
    expect(await w(page, 'details.tool summary').innerText()).toMatch(/lookup\s*Running/);
    await upsert({
      ...base,
      text: 'Done.',
      streaming: false,
      parts: [
        { type: 'reasoning', text: 'Let me think about it.' },
        { type: 'tool', toolCallId: 'c', toolName: 'lookup', state: 'output-available', input: {}, output: 1 },
        { type: 'text', text: 'Done.' },
      ],
    });
    expect(await w(page, 'details.tool summary').innerText()).toMatch(/lookup\s*Done/);
    expect(await w(page, '.msg.bot .md').innerText()).toBe('Done.');
  });

  it('through a real hub: a bot asks approval, two tabs show it, the second decides, the first shows it decided, the bot gets it once', async () => {
    const bot = await hub.agent('refund-bot');
    // Counted at the bot's socket, before the SDK's dedupe: the hub must deliver the decision once.
    const frames: unknown[] = [];
    (bot as unknown as { socket: { on(e: string, f: (a: unknown) => void): void } }).socket.on('approval', (a) => frames.push(a));
    const decisions: AgentApproval[] = [];
    bot.onApproval((a) => void decisions.push(a));
    let finished!: () => void;
    const answered = new Promise<void>((r) => (finished = r));
    bot.onMessage(async (m) => {
      const s = await bot.stream(m.from, { replyTo: m.id });
      s.reasoning('Order 42 qualifies; a refund needs the user to agree.');
      await s.write('I can refund **order 42**.');
      const call = s.tool({ toolName: 'refund', title: 'Refund order 42' });
      await call.inputAvailable({ order: 42, amount: '19.90 EUR' });
      await call.requestApproval();
      const { approved } = await call.decision();
      if (approved) await call.output({ refunded: true });
      else await call.denied();
      await s.end();
      finished();
    });
    const first = await widgetPage(browser, hub, 'refund-bot', { sub: 'refund-user', data: { open: '', title: 'Refunds' } });
    try {
      const second = await widgetPage(browser, hub, 'refund-bot', { sub: 'refund-user', data: { open: '' }, context: first.context });
      const [tab1, tab2] = [first.page, second.page];
      await online(tab1);
      await online(tab2);
      await w(tab1, 'textarea').fill('Please refund order 42');
      await w(tab1, 'textarea').press('Enter');
      for (const tab of [tab1, tab2]) {
        await w(tab, '.approval[aria-label="Refund order 42"] button:text("Approve")').waitFor();
        expect(await w(tab, '.msg.bot details.tool summary').innerText()).toMatch(/Refund order 42\s*Needs your approval/);
      }
      await screenshot(tab1, 'approval-1-asked.png');
      await w(tab2, '.approval button:text("Approve")').click();
      // The first tab, untouched and not reloaded, shows the decision; its buttons are gone.
      await w(tab1, '.approval .decided').waitFor();
      expect(await w(tab1, '.approval .decided').innerText()).toBe('Approved by you');
      expect(await w(tab1, '.approval button').count()).toBe(0);
      await answered;
      for (const tab of [tab1, tab2]) await w(tab, '.msg.bot:not([data-streaming]) details.tool summary:has-text("Done")').waitFor();
      await screenshot(tab1, 'approval-2-decided.png');
      expect(decisions.map((d) => [d.approved, d.from])).toEqual([[true, expect.any(String)]]);
      expect(frames).toHaveLength(1);
    } finally {
      await first.context.close();
    }
  }, 30_000);
});
