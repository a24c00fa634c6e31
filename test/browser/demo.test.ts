import { mkdir, readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Page } from 'playwright-core';
import type { JwtService } from '../../src/auth/jwt.service';
import { DEMO_AGENT_ID } from '../../src/demo/demo.routes';
import { startHub, type TestHub } from '../helpers/hub';
import { ARTIFACTS, chromiumForFile, PNG_SIGNATURE } from './chromium';

describe('demo page in Chromium', () => {
  const browser = chromiumForFile();
  let hub: TestHub;
  let page: Page;

  beforeEach(async () => {
    // The hub serves the page and the token route and runs the echo bot itself.
    hub = await startHub({ DEMO_ENABLED: 'true' });
    page = await browser().newPage();
  });
  afterEach(async () => {
    await page?.context().close();
    await hub?.close();
  });

  it('connects as an anonymous user, shows the bot online and gets the echo of a message', async () => {
    await page.goto(`${hub.url}/`);
    await page.waitForSelector('relay-chat .panel[data-state="connected"]');
    await page.waitForSelector('relay-chat .panel[data-online="true"]');
    await page.fill('relay-chat textarea', 'hello <b>demo</b>');
    await page.press('relay-chat textarea', 'Enter');
    // The echo streams in word by word: its final text is there once the item stops streaming.
    const echo = page.locator('relay-chat .msg.bot:not([data-streaming]) .md');
    await echo.waitFor();
    // Shown as text, never as markup.
    expect(await echo.textContent()).toBe('echo: hello <b>demo</b>');
    expect(await page.locator('relay-chat .msg.bot .md b').count()).toBe(0);
    await page.waitForSelector('relay-chat .msg.user[data-delivery="sent"]');

    await mkdir(ARTIFACTS, { recursive: true });
    const screenshot = resolve(ARTIFACTS, 'demo-page.png');
    await page.screenshot({ path: screenshot });
    const png = await readFile(screenshot);
    expect(png.length).toBeGreaterThan(PNG_SIGNATURE.length);
    expect(png.subarray(0, PNG_SIGNATURE.length).equals(PNG_SIGNATURE)).toBe(true);
  });

  /** Conversation items on screen, oldest first: [class, text, id]. */
  const conversation = (p: Page) =>
    p.$$eval('relay-chat .msg[data-id]', (items) =>
      items.map((el) => [
        el.classList.contains('user') ? 'me' : 'bot',
        el.querySelector('.bubble, .md')!.textContent,
        (el as HTMLElement).dataset.id,
      ]),
    );

  /** Types `text` and waits for its echo. */
  async function say(p: Page, text: string): Promise<void> {
    await p.fill('relay-chat textarea', text);
    await p.press('relay-chat textarea', 'Enter');
    await p.waitForFunction(
      (t) =>
        Array.from(document.querySelector('relay-chat')!.shadowRoot!.querySelectorAll('.msg.bot')).some(
          (el) => el.querySelector('.md')?.textContent === `echo: ${t}`,
        ),
      text,
    );
    await p.waitForFunction(
      () => document.querySelector('relay-chat')!.shadowRoot!.querySelectorAll('.msg.user:not([data-delivery="sent"])').length === 0,
    );
  }

  it('shows the earlier conversation after a reload, resuming from the last message seen', async () => {
    await page.goto(`${hub.url}/`);
    await page.waitForSelector('relay-chat .panel[data-state="connected"]');
    await page.waitForSelector('relay-chat .panel[data-online="true"]');
    await say(page, 'first');
    await say(page, 'second');
    const before = await conversation(page);
    expect(before.map(([kind, text]) => [kind, text])).toEqual([
      ['me', 'first'],
      ['bot', 'echo: first'],
      ['me', 'second'],
      ['bot', 'echo: second'],
    ]);

    await page.reload();
    await page.waitForSelector('relay-chat .panel[data-state="connected"]');
    await page.waitForFunction(() => document.querySelector('relay-chat')!.shadowRoot!.querySelectorAll('.msg[data-id]').length === 4);
    expect(await conversation(page)).toEqual(before);
    // The reloaded page handed the hub the last id it had seen (kept in sessionStorage).
    const resumed = [...hub.hub.io.of('/ws/client').sockets.values()]
      .map((socket) => (socket.handshake.auth as { lastMessageId?: string }).lastMessageId)
      .filter((id) => id !== undefined);
    expect(resumed).toHaveLength(1);
    expect([before[2][2], before[3][2]]).toContain(resumed[0]);
    await mkdir(ARTIFACTS, { recursive: true });
    const screenshot = resolve(ARTIFACTS, 'demo-after-reload.png');
    await page.screenshot({ path: screenshot });
    expect((await readFile(screenshot)).subarray(0, PNG_SIGNATURE.length).equals(PNG_SIGNATURE)).toBe(true);

    // And the chat goes on below it.
    await say(page, 'third');
    expect((await conversation(page)).map(([, text]) => text)).toEqual([
      'first',
      'echo: first',
      'second',
      'echo: second',
      'third',
      'echo: third',
    ]);
  });

  it('loads older messages with "Load earlier messages" and by scrolling to the top', async () => {
    await page.setViewportSize({ width: 420, height: 320 });
    await page.goto(`${hub.url}/?pageSize=3`);
    await page.waitForSelector('relay-chat .panel[data-state="connected"]');
    await page.waitForSelector('relay-chat .panel[data-online="true"]');
    for (const text of ['one', 'two', 'three', 'four']) await say(page, text);
    const all = (await conversation(page)).map(([, text]) => text);

    await page.reload();
    await page.waitForSelector('relay-chat .panel[data-state="connected"]');
    await page.waitForFunction(() => document.querySelector('relay-chat')!.shadowRoot!.querySelectorAll('.msg[data-id]').length === 3);
    expect((await conversation(page)).map(([, text]) => text)).toEqual(all.slice(5));
    await page.click('relay-chat .earlier');
    await page.waitForFunction(() => document.querySelector('relay-chat')!.shadowRoot!.querySelectorAll('.msg[data-id]').length === 6);
    expect((await conversation(page)).map(([, text]) => text)).toEqual(all.slice(2));
    expect(await page.isVisible('relay-chat .earlier')).toBe(true);

    await page.evaluate(() => document.querySelector('relay-chat')!.shadowRoot!.querySelector('.scroller')!.scrollTo(0, 0));
    await page.waitForFunction(() => document.querySelector('relay-chat')!.shadowRoot!.querySelectorAll('.msg[data-id]').length === 8);
    expect((await conversation(page)).map(([, text]) => text)).toEqual(all);
    await page.waitForSelector('relay-chat .earlier', { state: 'hidden' });
  });

  it("shows the user's messages from another tab as the user's own", async () => {
    // Two tabs of one browser profile share localStorage, so they are the same demo user.
    const profile = await browser().newContext();
    try {
      const first = await profile.newPage();
      await first.goto(`${hub.url}/`);
      await first.waitForSelector('relay-chat .panel[data-state="connected"]');
      await first.waitForSelector('relay-chat .panel[data-online="true"]');
      const other = await profile.newPage();
      await other.goto(`${hub.url}/`);
      await other.waitForSelector('relay-chat .panel[data-state="connected"]');

      await say(first, 'typed in the first tab');
      await other.waitForFunction(() => document.querySelector('relay-chat')!.shadowRoot!.querySelectorAll('.msg[data-id]').length === 2);
      // The answer streams to both tabs; the other one may get its end a moment after the first.
      await other.waitForFunction(
        () => document.querySelector('relay-chat')!.shadowRoot!.querySelectorAll('.msg.bot[data-streaming]').length === 0,
      );
      const mine = await conversation(first);
      expect(await conversation(other)).toEqual(mine);
      expect(mine.map(([kind, text]) => [kind, text])).toEqual([
        ['me', 'typed in the first tab'],
        ['bot', 'echo: typed in the first tab'],
      ]);
    } finally {
      await profile.close();
    }
  });

  it('keeps the same demo user across a reload', async () => {
    await page.goto(`${hub.url}/`);
    await page.waitForSelector('relay-chat .panel[data-state="connected"]');
    const user = await page.evaluate(() => localStorage.getItem('relay-hub-demo-user'));
    expect(user).toMatch(/^[0-9a-f-]{36}$/);
    const firstToken = page.waitForResponse((res) => res.url().endsWith('/demo/token'));
    await page.reload();
    const res = await firstToken;
    expect(res.request().postDataJSON()).toEqual({ user });
    expect((await res.json()).data.user).toBe(user);
  });
});

describe('demo token route', () => {
  let hub: TestHub;
  let jwt: JwtService;

  beforeAll(async () => {
    hub = await startHub({ DEMO_ENABLED: 'true' });
    jwt = hub.hub.jwt;
  });
  afterAll(async () => {
    await hub?.close();
  });

  const mint = (body: unknown) =>
    fetch(`${hub.url}/demo/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

  it('mints a short-lived token for a new anonymous user, limited to the demo bot', async () => {
    const res = await mint({});
    expect(res.status).toBe(201);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const { data, success } = await res.json();
    expect(success).toBe(true);
    const verified = jwt.verify(data.token);
    expect(verified.ok).toBe(true);
    if (!verified.ok) return;
    expect(verified.identity).toMatchObject({ sub: `demo-${data.user}`, agentIds: [DEMO_AGENT_ID], roles: [] });
    const lifetimeS = (Date.parse(data.expiresAt) - Date.now()) / 1000;
    expect(lifetimeS).toBeGreaterThan(250);
    expect(lifetimeS).toBeLessThanOrEqual(300);
  });

  it('keeps the sub of a returning user, so in-band refreshes are accepted', async () => {
    const first = (await (await mint({})).json()).data;
    const again = (await (await mint({ user: first.user })).json()).data;
    expect(again.user).toBe(first.user);
    const [a, b] = [jwt.verify(first.token), jwt.verify(again.token)];
    expect(a.ok && b.ok && a.identity.sub === b.identity.sub).toBe(true);
  });

  it('answers 400 problem+json for a user id it did not issue', async () => {
    for (const user of ['admin', 'x'.repeat(36), 42]) {
      const res = await mint({ user });
      expect(res.status).toBe(400);
      expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
      expect(await res.json()).toMatchObject({ status: 400, code: 'VALIDATION_FAILED', errors: [{ path: 'body.user' }] });
    }
  });
});
