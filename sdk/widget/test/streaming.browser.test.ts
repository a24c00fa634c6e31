import type { BrowserContext, Page } from 'playwright-core';
import type { RelayAgent } from '../../../src/sdk/agent';
import { chromiumForFile } from '../../../test/browser/chromium';
import { startHub, type TestHub } from '../../../test/helpers/hub';
import { sleep } from '../../../test/helpers/wait';
import { online, screenshot, w, widgetPage } from './widget-page';

/** A markdown answer with headings, a list, a table and a code block, streamed in small pieces. */
const ANSWER = `## Getting started

Install the package and **start** the hub:

- one \`npm install\`
- one ~~long~~ short command

| Option | Default |
|---|---|
| port | 3000 |
| host | 0.0.0.0 |

\`\`\`js
import { RelayChat } from '@relay-hub/browser';
const chat = new RelayChat({ url, agentId: 'bot', token });
\`\`\`

That is all. Read [the docs](https://relay.example/docs) for more.`;

function pieces(text: string, size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

describe('the widget in Chromium: a streamed markdown answer', () => {
  const browser = chromiumForFile();
  let hub: TestHub;
  let agent: RelayAgent;
  let context: BrowserContext;
  let page: Page;
  let reload: () => Promise<void>;
  /** Resolves the bot's gate: the stream below waits for it between pieces when set. */
  let gate: { promise: Promise<void>; open(): void } | undefined;

  beforeEach(async () => {
    hub = await startHub();
    agent = await hub.agent('md-bot');
    gate = undefined;
    agent.onMessage(async (m, { signal }) => {
      await agent.activity(m.from, 'thinking', 'Searching the docs…');
      if (m.text === 'slow start') await sleep(600);
      const s = await agent.stream(m.from, { replyTo: m.id });
      if (m.text === 'slow start') await sleep(600); // the stream is open, nothing visible yet
      const parts = pieces(ANSWER, 12);
      for (const [i, piece] of parts.entries()) {
        if (signal.aborted || s.signal.aborted) return;
        if (gate && i === Math.floor(parts.length / 2)) await gate.promise;
        await s.write(piece);
        await sleep(15);
      }
      await s.end();
    });
    ({ context, page, reload } = await widgetPage(browser(), hub, 'md-bot', { data: { title: 'Docs bot', open: '' } }));
    await online(page);
  });
  afterEach(async () => {
    await context?.close();
    await hub?.close();
  });

  const answer = () => w(page, '.msg.bot').last();

  function hold(): void {
    let open!: () => void;
    const promise = new Promise<void>((r) => (open = r));
    gate = { promise, open };
  }

  it('renders the answer as it grows (headings, table, code block), then highlights the code once it settles', async () => {
    hold();
    await w(page, 'textarea').fill('How do I start?');
    await w(page, 'textarea').press('Enter');
    await w(page, '.msg.bot[data-streaming] table').waitFor();
    expect(await w(page, '.send').getAttribute('aria-label')).toBe('Stop');
    const mid = await answer().innerText();
    await screenshot(page, 'streaming-1-mid.png');
    expect(mid).toContain('Getting started');
    expect(await w(page, '.msg.bot h4').innerText()).toBe('Getting started');
    // No highlighter yet: no code block has settled.
    expect(
      await page.evaluate(() => performance.getEntriesByType('resource').some((e) => e.name.endsWith('/sdk/widget-highlight.mjs'))),
    ).toBe(false);
    gate!.open();
    await w(page, '.msg.bot:not([data-streaming]) .actions').waitFor();
    await w(page, '.msg.bot figure.code code .hljs-keyword').first().waitFor();
    await screenshot(page, 'streaming-2-done.png');
    expect(await w(page, '.msg.bot figure.code figcaption').innerText()).toContain('js');
    expect(await w(page, '.msg.bot table').innerText()).toContain('0.0.0.0');
    const link = w(page, '.msg.bot a[href="https://relay.example/docs"]');
    expect(await link.getAttribute('rel')).toBe('noopener noreferrer');
    expect(await link.getAttribute('target')).toBe('_blank');
    expect(await w(page, '.send').getAttribute('aria-label')).toBe('Send');
    // The finished answer is announced once, politely.
    expect(await w(page, '[aria-live="polite"]').innerText()).toMatch(/^Docs bot: Getting started/);
  });

  it('keeps "thinking" with the activity label until the first visible content, not merely until the stream opens', async () => {
    await w(page, 'textarea').fill('slow start');
    await w(page, 'textarea').press('Enter');
    await w(page, '.thinking:not([hidden])').waitFor();
    expect(await w(page, '.thinking').innerText()).toBe('Searching the docs…');
    // The stream opens with no text: the bot message exists, thinking stays.
    await w(page, '.msg.bot[data-streaming]').waitFor({ state: 'attached' });
    expect(await w(page, '.thinking').isVisible()).toBe(true);
    await page.waitForFunction(
      () => (document.querySelector('relay-chat')!.shadowRoot!.querySelector('.msg.bot .md')?.textContent?.length ?? 0) > 0,
    );
    expect(await w(page, '.thinking').isHidden()).toBe(true);
  });

  it('Stop ends the answer with "Stopped" under it and no dangling punctuation', async () => {
    hold();
    await w(page, 'textarea').fill('How do I start?');
    await w(page, 'textarea').press('Enter');
    await w(page, '.msg.bot[data-streaming] table').waitFor();
    await w(page, '.send[aria-label="Stop"]').click();
    await w(page, '.msg.bot:not([data-streaming]) .status').waitFor();
    expect(await w(page, '.msg.bot .status').innerText()).toBe('Stopped');
    expect(await answer().locator('.md').innerText()).not.toMatch(/—\s*$/);
    expect(await w(page, '.send').getAttribute('aria-label')).toBe('Send');
    gate!.open();
  });

  it('a reload mid-answer shows the text so far, and it keeps growing to the end', async () => {
    hold();
    await w(page, 'textarea').fill('How do I start?');
    await w(page, 'textarea').press('Enter');
    await w(page, '.msg.bot[data-streaming] table').waitFor();
    const before = await answer().locator('.md').innerText();
    await reload();
    await online(page);
    await w(page, '.msg.bot[data-streaming] table').waitFor();
    const after = await answer().locator('.md').innerText();
    expect(after.slice(0, 40)).toBe(before.slice(0, 40));
    gate!.open();
    await w(page, '.msg.bot:not([data-streaming]) figure.code').waitFor();
    expect(await answer().locator('.md').innerText()).toContain('That is all.');
    expect(await w(page, '.msg.bot').count()).toBe(1);
  });
});
