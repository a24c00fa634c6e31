import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { RelayAgent } from '../../../src/sdk/agent';
import { launchChromium } from '../../../test/browser/chromium';
import { startHub, type TestHub } from '../../../test/helpers/hub';
import { online, screenshot, w, widgetPage } from './widget-page';

type El = HTMLElement & { transcript: { upsert(m: object): void; setThinking(label?: string): void }; strings: object };

const BOT = 'behaviour-bot';
const CODE_ANSWER = 'Start it with:\n\n```sh\nnpm start\n```\n\nThen open the page.';

/** How far the transcript is from its end, in pixels (0: the reader is at the bottom). */
const fromEnd = (page: Page) =>
  page.evaluate(() => {
    const s = document.querySelector('relay-chat')!.shadowRoot!.querySelector('.scroller')!;
    return Math.round(s.scrollHeight - s.scrollTop - s.clientHeight);
  });

/**
 * The widget's behaviour around the conversation, through a real hub: offline and back, retry of a
 * refused message, the unread badge, autoscroll and "Jump to latest", copying, reduced motion, day
 * separators and times, replaced strings.
 */
describe('the widget in Chromium: offline, retry, unread, scrolling, copy, motion, times', () => {
  let browser: Browser;
  let hub: TestHub;
  let agent: RelayAgent;
  let context: BrowserContext | undefined;
  /** What the bot received, in order. */
  const received: string[] = [];

  beforeAll(async () => {
    browser = await launchChromium();
    hub = await startHub();
    agent = await hub.agent(BOT);
    agent.onMessage(async (m) => {
      received.push(m.text);
      await agent.reply(m.from, { text: m.text === 'code please' ? CODE_ANSWER : `echo: ${m.text}`, replyTo: m.id });
    });
  });
  afterAll(async () => {
    await hub?.close();
    await browser?.close();
  });
  afterEach(async () => {
    await context?.close();
    context = undefined;
  });

  async function open(sub: string, options: Parameters<typeof widgetPage>[3] = {}, agentId = BOT): Promise<Page> {
    const opened = await widgetPage(browser, hub, agentId, { sub, ...options, data: { open: '', ...options.data } });
    context = opened.context;
    return opened.page;
  }

  it('cut off, it shows the offline banner and keeps what is written; back, the banner goes and the message goes out once', async () => {
    const page = await open('offline-user');
    await online(page);
    expect(await w(page, '.banner').isHidden()).toBe(true);
    await context!.setOffline(true);
    await w(page, '.banner').waitFor();
    expect(await w(page, '.banner').innerText()).toBe("Offline — we'll send when you're back");
    expect(await w(page, '.presence').innerText()).toBe("Offline — we'll send when you're back");
    await w(page, 'textarea').fill('written offline');
    await w(page, 'textarea').press('Enter');
    expect(await w(page, '.msg.user').last().innerText()).toMatch(/^written offline\s+Sending…$/);
    await screenshot(page, 'offline-banner.png');
    await context!.setOffline(false);
    await w(page, '.banner').waitFor({ state: 'hidden' });
    await w(page, '.msg.bot:has-text("echo: written offline")').waitFor();
    expect(await w(page, '.presence').innerText()).toBe('Online');
    expect(await w(page, '.msg.user').last().getAttribute('data-delivery')).toBe('sent');
    expect(received.filter((t) => t === 'written offline')).toHaveLength(1);
  });

  it('a message the hub refused says "Not sent — retry"; the retry sends it, once', async () => {
    // A bot with no runtime: the hub answers AGENT_OFFLINE.
    const page = await open('retry-user', {}, 'retry-bot');
    await w(page, '.presence:text("Away — replies may wait")').waitFor();
    await w(page, 'textarea').fill('are you there?');
    await w(page, 'textarea').press('Enter');
    const retry = w(page, '.msg.user[data-delivery=failed] .status button');
    await retry.waitFor();
    expect(await retry.innerText()).toBe('Not sent — retry');
    await screenshot(page, 'retry-not-sent.png');
    const got: string[] = [];
    const late = await hub.agent('retry-bot');
    late.onMessage((m) => void got.push(m.text));
    await w(page, '.presence:text("Online")').waitFor();
    await retry.click();
    await w(page, '.msg.user[data-delivery=sent]').waitFor();
    expect(await w(page, '.msg.user').count()).toBe(1);
    expect(await w(page, '.msg.user .status').innerText()).toBe('');
    expect(got).toEqual(['are you there?']);
  });

  it('counts unread answers on the closed launcher, streamed ones too; opening clears the badge', async () => {
    const page = await open('unread-user', { data: { open: '' } });
    await online(page);
    await page.evaluate(() => (document.querySelector('relay-chat') as HTMLElement & { hide(): void }).hide());
    expect(await w(page, '.badge').isHidden()).toBe(true);
    await agent.reply('unread-user', 'A reply while you were away.');
    await w(page, '.badge:text("1")').waitFor();
    const s = await agent.stream('unread-user');
    await s.write('A streamed ');
    await s.write('answer.');
    await s.end();
    await w(page, '.badge:text("2")').waitFor();
    expect(await w(page, '.launcher').getAttribute('aria-label')).toBe('Open chat — 2 unread');
    await screenshot(page, 'unread-badge.png');
    await w(page, '.launcher').click();
    expect(await w(page, '.badge').isHidden()).toBe(true);
    expect(await w(page, '.launcher').getAttribute('aria-label')).toBe('Open chat');
  });

  it('follows new messages only from the bottom; scrolled up, "Jump to latest" appears and takes the reader down', async () => {
    const page = await open('scroll-user', { viewport: { width: 375, height: 667 } });
    await online(page);
    await page.evaluate(() => {
      const el = document.querySelector('relay-chat') as El;
      for (let i = 0; i < 30; i++) el.transcript.upsert({ id: `old-${i}`, author: 'agent', text: `Earlier answer ${i}.` });
    });
    await page.waitForFunction(() => document.querySelector('relay-chat')!.shadowRoot!.querySelector('.scroller')!.scrollTop > 0);
    expect(await fromEnd(page)).toBeLessThanOrEqual(1);
    // At the bottom: a new answer is followed.
    await agent.reply('scroll-user', 'Followed.');
    await w(page, '.msg.bot:has-text("Followed.")').waitFor();
    await page.waitForFunction(() => {
      const s = document.querySelector('relay-chat')!.shadowRoot!.querySelector('.scroller')!;
      return s.scrollHeight - s.scrollTop - s.clientHeight <= 1;
    });
    expect(await w(page, '.jump').isHidden()).toBe(true);
    // Scrolled up: the reader stays where they are, and the pill offers the way down.
    // The widget learns of a scroll from its scroll event, as it does a reader's: the reply waits for it.
    await w(page, '.scroller').evaluate(
      (s) =>
        new Promise((scrolled) => {
          s.addEventListener('scroll', scrolled, { once: true });
          s.scrollTo({ top: 0 });
        }),
    );
    await agent.reply('scroll-user', 'Not followed.');
    await w(page, '.jump').waitFor();
    expect(await w(page, '.scroller').evaluate((s) => s.scrollTop)).toBe(0);
    expect(await w(page, '.jump').innerText()).toBe('Jump to latest');
    await screenshot(page, 'jump-to-latest.png');
    await w(page, '.jump').click();
    await page.waitForFunction(() => {
      const s = document.querySelector('relay-chat')!.shadowRoot!.querySelector('.scroller')!;
      return s.scrollHeight - s.scrollTop - s.clientHeight <= 1;
    });
    expect(await w(page, '.jump').isHidden()).toBe(true);
  });

  it('copies an answer as its markdown, and a code block as its code', async () => {
    const page = await open('copy-user');
    await online(page);
    await w(page, 'textarea').fill('code please');
    await w(page, 'textarea').press('Enter');
    const answer = w(page, '.msg.bot:has(figure.code)');
    await answer.locator('.actions').waitFor();
    await answer.locator('.actions button[aria-label="Copy answer"]').click();
    await answer.locator('.actions button[aria-label="Copied"]').waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(CODE_ANSWER);
    await answer.locator('figure.code button[aria-label="Copy code"]').click();
    await answer.locator('figure.code button[aria-label="Copied"]').waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe('npm start');
  });

  it('prefers-reduced-motion stops the pulse, the caret and the spinner', async () => {
    const page = await open('motion-user', { reducedMotion: 'no-preference' });
    await page.evaluate(() => {
      const el = document.querySelector('relay-chat') as El;
      el.transcript.upsert({
        id: 'moving',
        author: 'agent',
        streaming: true,
        text: 'Growing',
        parts: [
          { type: 'tool', toolCallId: 't', toolName: 'lookup', state: 'input-available', input: {} },
          { type: 'text', text: 'Growing' },
        ],
      });
      el.transcript.setThinking('Searching…');
    });
    await w(page, '.msg.bot .md p').waitFor();
    const motion = () =>
      page.evaluate(() => {
        const root = document.querySelector('relay-chat')!.shadowRoot!;
        const name = (sel: string, pseudo?: string) => getComputedStyle(root.querySelector(sel)!, pseudo).animationName;
        return { pulse: name('.dots i'), caret: name('.msg.bot .md p', '::after'), spinner: name('.spin') };
      });
    expect(await motion()).toEqual({ pulse: 'pulse', caret: 'blink', spinner: 'spin' });
    await page.emulateMedia({ reducedMotion: 'reduce' });
    expect(await motion()).toEqual({ pulse: 'none', caret: 'none', spinner: 'none' });
    // The label stays, without the dots.
    expect(await w(page, '.thinking').innerText()).toBe('Searching…');
    expect(await w(page, '.dots').isHidden()).toBe(true);
  });

  it('separates days and times each message ("now", "5 min. ago", the time of day), in the panel language; strings replaceable, Arabic right to left', async () => {
    context = await browser.newContext({ viewport: { width: 480, height: 800 }, timezoneId: 'Europe/Paris', reducedMotion: 'reduce' });
    const page = await context.newPage();
    await page.clock.install({ time: new Date('2026-03-10T14:00:00+01:00') });
    await page.goto(`${hub.url}/health/live`);
    await page.setContent('<!doctype html><html lang="en"><body style="margin:0"><div id="box" style="height:800px"></div></body></html>');
    await page.addScriptTag({ url: '/sdk/widget.mjs', type: 'module' });
    await page.evaluate(async () => {
      await customElements.whenDefined('relay-chat');
      const el = document.createElement('relay-chat') as El;
      el.setAttribute('mode', 'inline');
      document.getElementById('box')!.append(el);
      const say = (id: string, ts: string, author = 'agent') => el.transcript.upsert({ id, author, text: `Message ${id}`, ts });
      say('a', '2025-12-31T18:00:00+01:00');
      say('b', '2026-03-06T09:30:00+01:00', 'user');
      say('c', '2026-03-09T20:15:00+01:00');
      say('d', '2026-03-10T13:55:00+01:00', 'user');
      say('e', '2026-03-10T13:59:40+01:00');
      el.transcript.upsert({ id: 'f', author: 'user', text: 'Not acknowledged yet', delivery: 'sending' });
    });
    const texts = async (selector: string) => (await w(page, selector).allInnerTexts()).map((t) => t.replace(/\s/g, ' '));
    expect(await texts('.day')).toEqual(['Wednesday, December 31, 2025', 'Friday, March 6', 'Yesterday', 'Today']);
    expect(await texts('.msg > time')).toEqual(['6:00 PM', '9:30 AM', '8:15 PM', '5 min. ago', 'now']);
    const d = w(page, '.msg[data-id=d] > time');
    expect(await d.getAttribute('datetime')).toBe('2026-03-10T13:55:00+01:00');
    expect((await d.getAttribute('title'))?.replace(/\s/g, ' ')).toBe('Tuesday, March 10, 2026 at 1:55 PM');
    await screenshot(page, 'days-and-times.png');
    // An answer's actions hidden (not the newest, not rated) take no room: the answer ends with its
    // time, the actions drawn beside it when shown.
    for (const id of ['a', 'c', 'e']) {
      const below = await w(page, `.msg[data-id=${id}]`).evaluate(
        (m) => m.getBoundingClientRect().bottom - m.querySelector(':scope>time')!.getBoundingClientRect().bottom,
      );
      expect({ id, below }).toEqual({ id, below: 0 });
    }
    // Still reachable by keyboard: from the transcript, Tab reaches the first answer's Copy, shown and uncovered.
    await w(page, '.scroller').focus();
    await page.keyboard.press('Tab');
    const copy = w(page, '.msg[data-id=a] .actions button').first();
    expect(
      await copy.evaluate((b) => {
        const root = b.getRootNode() as ShadowRoot;
        const r = b.getBoundingClientRect();
        const style = getComputedStyle(b.parentElement!);
        return [
          root.activeElement === b,
          style.opacity,
          b.contains(root.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2)),
          r.height,
        ];
      }),
    ).toEqual([true, '1', true, 32]);
    await screenshot(page, 'days-and-times-keyboard.png');
    // A minute later, the times say so.
    await page.clock.runFor(60_000);
    expect(await texts('.msg > time')).toEqual(['6:00 PM', '9:30 AM', '8:15 PM', '6 min. ago', '1 min. ago']);
    // In French, through Intl (no strings needed for days and times).
    await page.evaluate(() => document.querySelector('relay-chat')!.setAttribute('lang', 'fr'));
    expect(await texts('.day')).toEqual(['mercredi 31 décembre 2025', 'vendredi 6 mars', 'Hier', 'Aujourd’hui']);
    expect(await texts('.msg > time')).toEqual(['18:00', '9:30', '20:15', 'il y a 6 min', 'il y a 1 min']);
    // The integrator's strings replace the built-in ones; Arabic lays the panel out right to left.
    await page.evaluate(() => {
      const el = document.querySelector('relay-chat') as El;
      el.strings = { placeholder: 'Votre message…', send: 'Envoyer' };
    });
    expect(await w(page, 'textarea').getAttribute('placeholder')).toBe('Votre message…');
    await w(page, 'textarea').fill('Bonjour');
    expect(await w(page, '.send').getAttribute('aria-label')).toBe('Envoyer');
    expect(await w(page, '.panel').getAttribute('dir')).toBe('ltr');
    await page.evaluate(() => document.querySelector('relay-chat')!.setAttribute('lang', 'ar'));
    expect(await w(page, '.panel').getAttribute('dir')).toBe('rtl');
    expect(await w(page, '.panel').getAttribute('lang')).toBe('ar');
  });

  it("the script tag's data-path and data-page-size reach the element: it connects under the path prefix", async () => {
    context = await browser.newContext();
    const page = await context.newPage();
    const sockets: string[] = [];
    page.on('websocket', (ws) => sockets.push(new URL(ws.url()).pathname));
    const tried = page.waitForEvent('websocket');
    await page.goto(`${hub.url}/health/live`);
    await page.setContent(
      `<!doctype html><html lang="en"><body><script src="/sdk/widget.js" data-agent-id="${BOT}" data-token="t" data-path="/relay" data-page-size="5"></script></body></html>`,
    );
    await tried;
    const el = w(page, '');
    expect([await el.getAttribute('path'), await el.getAttribute('page-size')]).toEqual(['/relay', '5']);
    expect(sockets).toEqual(['/relay/socket.io/']);
  });

  it('taken out of the page and put back (as a single-page app does), it leaves no more online and offline listeners on the window than before', async () => {
    const page = await open('listeners-user');
    await online(page);
    const cdp = await page.context().newCDPSession(page);
    const listeners = async () => {
      const { result } = await cdp.send('Runtime.evaluate', { expression: 'window' });
      const { listeners } = await cdp.send('DOMDebugger.getEventListeners', { objectId: result.objectId! });
      return listeners.filter((l) => l.type === 'online' || l.type === 'offline').length;
    };
    const before = await listeners();
    for (let i = 0; i < 3; i++) {
      await page.evaluate(() => {
        const el = document.querySelector('relay-chat')!;
        const parent = el.parentNode!;
        el.remove();
        parent.appendChild(el);
      });
      await online(page);
    }
    expect(await listeners()).toBe(before);
  });

  it('strings replaced after it connected: the new transcript pages history from its own newest page, leaving out nothing', async () => {
    for (let i = 1; i <= 6; i++) await agent.reply('paging-user', `page m${i}`);
    const page = await open('paging-user', { data: { 'page-size': '3' } });
    await online(page);
    const shown = async () => (await w(page, '.msg.bot').allInnerTexts()).map((text) => /page m\d/.exec(text)?.[0]);
    await w(page, '.msg.bot:has-text("page m4")').waitFor();
    await w(page, '.earlier').click();
    await w(page, '.msg.bot:has-text("page m1")').waitFor();
    expect(await shown()).toEqual(['page m1', 'page m2', 'page m3', 'page m4', 'page m5', 'page m6']);

    await page.evaluate(() => ((document.querySelector('relay-chat') as El).strings = { loadEarlier: 'Show older' }));
    await w(page, '.earlier:text("Show older")').waitFor();
    expect(await shown()).toEqual(['page m4', 'page m5', 'page m6']);
    await w(page, '.earlier').click();
    await w(page, '.msg.bot:has-text("page m1")').waitFor({ timeout: 5000 });
    expect(await shown()).toEqual(['page m1', 'page m2', 'page m3', 'page m4', 'page m5', 'page m6']);
  });
});
