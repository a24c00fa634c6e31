import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { RelayAgent } from '../../../src/sdk/agent';
import { launchChromium } from '../../../test/browser/chromium';
import { startHub, type TestHub } from '../../../test/helpers/hub';
import { online, w, widgetPage } from './widget-page';

/** Every payload calls the page's trap if it ever runs. */
const CORPUS = [
  '<script>__trap()</script>',
  '<img src=x onerror=__trap()>',
  '<svg onload=__trap()></svg>',
  '<svg><script>__trap()</script></svg>',
  '<svg><a xlink:href="javascript:__trap()"><text x="0" y="20">svg link</text></a></svg>',
  '<iframe src="javascript:__trap()"></iframe>',
  '<details open ontoggle=__trap()>x</details>',
  '<a href="javascript:__trap()">html link</a>',
  '<style>*{display:none}</style><b onmouseover=__trap()>hover</b>',
  '<math><mi xlink:href="javascript:__trap()">m</mi></math>',
  '[md link](javascript:__trap())',
  '[md link](JaVaScRiPt:__trap())',
  '[md link](  javascript:__trap()  )',
  '[md link](&#106;avascript:__trap())',
  '[md link](java\tscript:__trap())',
  '[data link](data:text/html;base64,PHNjcmlwdD5fX3RyYXAoKTwvc2NyaXB0Pg==)',
  '[vb](vbscript:__trap())',
  '<javascript:__trap()>',
  '![img](javascript:__trap())',
  '![img](x" onerror="__trap())',
  '![img](data:image/svg+xml,<svg onload=__trap()>)',
  '[title trick](https://ok.example "t\\" onmouseover=\\"__trap()")',
  '[ref trick][r]\n\n[r]: javascript:__trap()',
  '`<img src=x onerror=__trap()>`',
  '```html\n<img src=x onerror=__trap()><script>__trap()</script>\n```',
  '| a | <img src=x onerror=__trap()> |\n|---|---|\n| <script>__trap()</script> | [x](javascript:__trap()) |',
  '- [x] <img src=x onerror=__trap()>',
  '&lt;img src=x onerror=__trap()&gt; &#60;script&#62;__trap()&#60;/script&#62;',
];

/** Elements or attributes that could run or load something, anywhere in the widget's shadow root. */
function activeContent(): string[] {
  const root = document.querySelector('relay-chat')!.shadowRoot!;
  const found: string[] = [];
  for (const el of root.querySelectorAll('*')) {
    const tag = el.tagName.toLowerCase();
    if (['script', 'iframe', 'object', 'embed', 'img', 'math', 'style', 'link', 'meta', 'base', 'form', 'details'].includes(tag)) {
      // The widget's own: its style sheet, the composer and comment forms, its parts' details.
      if (tag === 'style' && el.parentNode === root) continue;
      if (tag === 'form' && (el.classList.contains('composer') || el.classList.contains('comment'))) continue;
      found.push(tag);
    }
    if (tag === 'svg' && !el.classList.contains('icon')) found.push('svg');
    for (const attr of el.getAttributeNames()) {
      if (attr.startsWith('on')) found.push(`${tag}[${attr}]`);
      if ((attr === 'href' || attr === 'src' || attr === 'xlink:href') && !/^(https?:|mailto:)/.test(el.getAttribute(attr)!))
        found.push(`${tag}[${attr}=${el.getAttribute(attr)}]`);
    }
  }
  return found;
}

describe('the widget in Chromium: nothing a bot or a user writes runs', () => {
  let browser: Browser;
  let hub: TestHub;
  let agent: RelayAgent;
  let context: BrowserContext;
  let page: Page;

  beforeAll(async () => {
    browser = await launchChromium();
    // The corpus goes out in a burst: no rate limit in the way.
    const unlimited = {
      MESSAGE_RATE_PER_S: '1000',
      MESSAGE_RATE_BURST: '1000',
      USER_MESSAGE_RATE_PER_S: '1000',
      USER_MESSAGE_RATE_BURST: '1000',
    };
    hub = await startHub(unlimited);
    agent = await hub.agent('xss-bot');
    agent.onMessage(async (m) => {
      if (m.text === 'corpus please') for (const payload of CORPUS) await agent.reply(m.from, payload, undefined, m.id);
    });
    ({ context, page } = await widgetPage(browser, hub, 'xss-bot', { data: { open: '' } }));
    await page.evaluate(() => {
      const w = window as unknown as { trapped: number; __trap(): void };
      w.trapped = 0;
      w.__trap = () => void w.trapped++;
      window.alert = w.__trap;
    });
    await online(page);
  }, 60_000);
  afterAll(async () => {
    await context?.close();
    await hub?.close();
    await browser?.close();
  });

  it('has a trap that counts: markup parsed into the page outside the widget trips it', async () => {
    await page.evaluate(() => document.body.insertAdjacentHTML('beforeend', '<img id="control" src="x" onerror="__trap()">'));
    await page.waitForFunction(() => (window as unknown as { trapped: number }).trapped === 1);
    await page.evaluate(() => {
      document.getElementById('control')!.remove();
      (window as unknown as { trapped: number }).trapped = 0;
    });
  });

  it('shows the corpus sent by a bot as inert text and links with safe URLs only', async () => {
    await w(page, 'textarea').fill('corpus please');
    await w(page, 'textarea').press('Enter');
    await page.waitForFunction(
      (n) => document.querySelector('relay-chat')!.shadowRoot!.querySelectorAll('.msg.bot .actions').length >= n,
      CORPUS.length,
    );
    // Settled code blocks load the highlighter: its output must be inert too.
    await w(page, '.msg.bot figure.code code span').first().waitFor();
    // Hover and click over everything the bot sent, as a curious user would.
    for (const el of await w(page, '.msg.bot .parts *').all()) await el.hover({ force: true, timeout: 1000 }).catch(() => {});
    for (const a of await w(page, '.msg.bot .parts a').all()) expect(await a.getAttribute('href')).toMatch(/^https?:/);
    expect(await page.evaluate(activeContent)).toEqual([]);
    expect(await page.evaluate(() => (window as unknown as { trapped: number }).trapped)).toBe(0);
    // The payloads are on screen as text.
    const shown = await w(page, '.list').innerText();
    expect(shown).toContain('<script>__trap()</script>');
    expect(shown).toContain('<img src=x onerror=__trap()>');
  });

  it('shows the corpus sent by the user as plain text in their bubbles', async () => {
    for (const payload of CORPUS) {
      await w(page, 'textarea').fill(payload);
      await w(page, '.send').click();
    }
    await page.waitForFunction(
      (n) => document.querySelector('relay-chat')!.shadowRoot!.querySelectorAll('.msg.user[data-delivery=sent]').length >= n,
      CORPUS.length + 1,
    );
    const bubbles = await w(page, '.msg.user .bubble').allInnerTexts();
    expect(bubbles.slice(1)).toEqual(CORPUS.map((p) => p.trim()));
    expect(await page.evaluate(activeContent)).toEqual([]);
    expect(await page.evaluate(() => (window as unknown as { trapped: number }).trapped)).toBe(0);
  });
});
