import { mkdir, readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Page } from 'playwright-core';
import { startHub, type TestHub } from '../helpers/hub';
import { ARTIFACTS, chromiumForFile, PNG_SIGNATURE } from './chromium';

/** A message whose echo the demo bot streams for a few seconds (40 ms a word). */
const LONG = Array.from({ length: 120 }, (_, i) => `word${i}`).join(' ');
const ANSWER = `echo: ${LONG}`;

describe('demo page in Chromium: streamed answers', () => {
  const browser = chromiumForFile();
  let hub: TestHub;
  let page: Page;

  beforeEach(async () => {
    hub = await startHub({ DEMO_ENABLED: 'true' });
    page = await browser().newPage();
    await page.goto(`${hub.url}/`);
    await page.waitForSelector('relay-chat .panel[data-state="connected"]');
    await page.waitForSelector('relay-chat .panel[data-online="true"]');
  });
  afterEach(async () => {
    await page?.context().close();
    await hub?.close();
  });

  /** The text of the bot's answer on screen (the newest bot message). */
  const answer = (p: Page) => p.$eval('relay-chat .msg.bot:last-of-type .md', (el) => el.textContent ?? '');
  /** Waits until the answer on screen has more than `chars` characters, and returns it. */
  async function grownPast(p: Page, chars: number): Promise<string> {
    await p.waitForFunction(
      (n) => (document.querySelector('relay-chat')!.shadowRoot!.querySelector('.msg.bot:last-of-type .md')?.textContent?.length ?? 0) > n,
      chars,
    );
    return answer(p);
  }
  async function screenshot(p: Page, name: string): Promise<void> {
    await mkdir(ARTIFACTS, { recursive: true });
    const file = resolve(ARTIFACTS, name);
    await p.screenshot({ path: file });
    expect((await readFile(file)).subarray(0, PNG_SIGNATURE.length).equals(PNG_SIGNATURE)).toBe(true);
  }
  async function ask(p: Page, text: string): Promise<void> {
    await p.fill('relay-chat textarea', text);
    await p.press('relay-chat textarea', 'Enter');
  }

  it('shows "thinking…", then the answer growing word by word, then the final text with thumbs that rate it', async () => {
    await ask(page, LONG);
    await page.waitForSelector('relay-chat .thinking:not([hidden])');
    expect(await page.textContent('relay-chat .thinking')).toBe('Thinking…');
    await page.waitForSelector('relay-chat .msg.bot[data-streaming]');
    expect(await page.isVisible('relay-chat .send.stop')).toBe(true);

    const early = await grownPast(page, 40);
    await screenshot(page, 'demo-streaming-early.png');
    const later = await grownPast(page, early.length + 200);
    await screenshot(page, 'demo-streaming-later.png');
    expect(ANSWER.startsWith(early)).toBe(true);
    expect(ANSWER.startsWith(later)).toBe(true);
    expect(later.length).toBeGreaterThan(early.length);
    expect(await page.isHidden('relay-chat .thinking')).toBe(true);

    await page.waitForSelector('relay-chat .msg.bot:not([data-streaming])');
    expect(await answer(page)).toBe(ANSWER);
    // The thumbs add nothing to the message's text (only its time follows the answer); the rating is
    // kept with the message in the log.
    const time = await page.textContent('relay-chat .msg.bot > time');
    expect(time).toMatch(/^(now|\d+ min\. ago)$/);
    expect(await page.textContent('relay-chat .msg.bot')).toBe(ANSWER + time);
    expect(await page.isHidden('relay-chat .send.stop')).toBe(true);
    await page.click('relay-chat .msg.bot .actions [data-rating="up"]');
    await page.waitForSelector('relay-chat .msg.bot .actions [data-rating="up"][aria-pressed="true"]');
    const rated = await page.evaluate(async () => {
      const { messages } = await (
        document.querySelector('relay-chat') as unknown as {
          chat: { history(): Promise<{ messages: Array<{ author: string; feedback?: { rating: string } }> }> };
        }
      ).chat.history();
      return messages.find((m) => m.author === 'agent')?.feedback?.rating;
    });
    expect(rated).toBe('up');
  });

  it('ends the answer where it was when Stop is pressed', async () => {
    await ask(page, LONG);
    await grownPast(page, 60);
    await page.click('relay-chat .send.stop');
    await page.waitForSelector('relay-chat .msg.bot .status:text("Stopped")');
    const stopped = await answer(page);
    expect(ANSWER.startsWith(stopped)).toBe(true);
    expect(stopped.length).toBeLessThan(ANSWER.length);
    expect(await page.isHidden('relay-chat .send.stop')).toBe(true);
    // The bot honoured the stop: the text does not move any more (the stream is over).
    const ids = await page.$$eval('relay-chat .msg.bot', (items) => items.map((li) => (li as HTMLElement).dataset.id));
    const history = await page.evaluate(
      async () =>
        (
          await (
            document.querySelector('relay-chat') as unknown as { chat: { history(): Promise<{ messages: unknown[] }> } }
          ).chat.history()
        ).messages,
    );
    expect(history).toEqual(expect.arrayContaining([expect.objectContaining({ id: ids[0], text: stopped, status: 'cancelled' })]));
  });

  it('continues the answer after a reload mid-answer: the text so far at once, then it keeps growing', async () => {
    await ask(page, LONG);
    const before = await grownPast(page, 80);
    const id = await page.$eval('relay-chat .msg.bot', (li) => (li as HTMLElement).dataset.id);
    await page.reload();
    await page.waitForSelector('relay-chat .panel[data-state="connected"]');
    await page.waitForSelector(`relay-chat .msg.bot[data-id="${id}"]`);
    const resumed = await answer(page);
    expect(resumed.startsWith(before)).toBe(true);
    await screenshot(page, 'demo-streaming-after-reload.png');
    const grown = await grownPast(page, resumed.length);
    expect(ANSWER.startsWith(grown)).toBe(true);
    await page.waitForSelector('relay-chat .msg.bot:not([data-streaming])');
    expect(await answer(page)).toBe(ANSWER);
    expect(await page.$$eval('relay-chat .msg.bot', (items) => items.length)).toBe(1);
  });
});
