import type { Browser, BrowserContext, Page } from 'playwright-core';
import { DEMO_AGENT_ID } from '../../../src/demo/demo.routes';
import { launchChromium } from '../../../test/browser/chromium';
import { startHub, type TestHub } from '../../../test/helpers/hub';
import { mintToken, TEST_ADMIN_JWT_SECRET } from '../../../test/helpers/tokens';
import { online, screenshot, w, widgetPage } from './widget-page';

const AXE = require.resolve('axe-core/axe.min.js');
const USER = 'handoff-widget-user';

/** An operator token for the demo bot, shown to users as "Ana Lima". */
const operatorToken = () =>
  mintToken({ sub: 'ana', name: 'Ana Lima', roles: ['OPERATOR'], agentIds: [DEMO_AGENT_ID] } as never, TEST_ADMIN_JWT_SECRET);

/**
 * A person takes the conversation over through the hub's REST API (docs/handoff.md), writes, and
 * hands back; the widget shows each step as the user sees it.
 */
describe('the widget in Chromium: human handoff', () => {
  let browser: Browser;
  let hub: TestHub;
  let context: BrowserContext;
  let page: Page;
  let reload: () => Promise<void>;

  beforeAll(async () => {
    browser = await launchChromium();
    hub = await startHub({ DEMO_ENABLED: 'true' });
    ({ context, page, reload } = await widgetPage(browser, hub, DEMO_AGENT_ID, { sub: USER, data: { open: '', title: 'Helper' } }));
  });
  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await hub?.close();
  });

  const rest = async (action: string, body?: object) => {
    const res = await fetch(`${hub.url}/agents/${DEMO_AGENT_ID}/conversations/${USER}/${action}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${operatorToken()}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    expect([action, res.status]).toEqual([action, action === 'operator-messages' ? 201 : 200]);
  };

  async function violations(): Promise<string[]> {
    if (!(await page.evaluate(() => 'axe' in window))) await page.addScriptTag({ path: AXE });
    const found = await page.evaluate(async () => {
      type V = { id: string; impact: string; nodes: { target: unknown }[] };
      const axe = (window as unknown as { axe: { run(c: object, o: object): Promise<{ violations: V[] }> } }).axe;
      const tags = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa', 'best-practice'];
      return (await axe.run({ include: [['relay-chat']] }, { runOnly: { type: 'tag', values: tags } })).violations;
    });
    return found.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${JSON.stringify(v.nodes)}`);
  }

  it('shows the operator joining, their message with their name, and the hand-back', async () => {
    await online(page);
    await page.evaluate(() => (document.querySelector('relay-chat') as HTMLElement & { show(): void }).show());
    // The user writes first, so the conversation exists on the hub.
    await w(page, 'textarea').fill('I need a person');
    await w(page, 'textarea').press('Enter');
    await w(page, '.msg.bot:has-text("I need a person")').first().waitFor();

    await rest('takeover');
    await w(page, '.msg.sys:has-text("Ana Lima joined the conversation")').waitFor();
    await w(page, '.title:has-text("Ana Lima")').waitFor();
    expect(await w(page, 'header .avatar').innerText()).toBe('A');
    // Cut off and back: the hub's own line of the change (replayed, or in a page of history after a
    // gap) takes the place of the one shown live instead of showing it twice.
    await context.setOffline(true);
    await w(page, '.panel[data-state=connecting]').waitFor();
    await context.setOffline(false);
    await online(page);

    await rest('operator-messages', { text: 'Hi, I am Ana. How can I help?' });
    const said = w(page, '.msg.bot:has-text("Hi, I am Ana")');
    await said.waitFor();
    // The initial's avatar (hidden from screen readers), then the name.
    expect(await said.locator('.who').innerText()).toBe('AAna Lima');
    expect(await w(page, '.msg.sys').allInnerTexts()).toEqual(['Ana Lima joined the conversation']);
    expect(await said.locator('.who .avatar').getAttribute('aria-hidden')).toBe('true');
    // Left-aligned like the bot's answers, not on the user's side.
    const box = (await said.boundingBox())!;
    const list = (await w(page, '.list').boundingBox())!;
    expect(box.x - list.x).toBeLessThan(24);
    expect(await violations()).toEqual([]);
    await screenshot(page, 'handoff-held.png');

    await rest('release');
    await w(page, '.msg.sys:has-text("You\'re back with the assistant")').waitFor();
    await w(page, '.title:has-text("Helper")').waitFor();
    expect(await violations()).toEqual([]);
    await screenshot(page, 'handoff-back.png');

    // After a reload the lines come from the hub's history, in the widget's words.
    await reload();
    await online(page);
    await page.evaluate(() => (document.querySelector('relay-chat') as HTMLElement & { show(): void }).show());
    await w(page, '.msg.sys:has-text("Ana Lima joined the conversation")').waitFor();
    await w(page, '.msg.sys:has-text("You\'re back with the assistant")').waitFor();
    await w(page, '.msg.bot:has-text("Hi, I am Ana") .who:has-text("Ana Lima")').waitFor();
    expect(await w(page, '.title').innerText()).toBe('Helper');
  });
});
