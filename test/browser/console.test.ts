import { mkdir, readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { DEMO_AGENT_ID } from '../../src/demo/demo.routes';
import { startHub, type TestHub } from '../helpers/hub';
import { mintToken, TEST_ADMIN_JWT_SECRET } from '../helpers/tokens';
import { launchChromium } from './chromium';
import { online, w, widgetPage } from '../../sdk/widget/test/widget-page';
import type { AgentApproval } from '../../src/protocol';

/** Where browser tests leave files for people to look at (gitignored; CI may upload it). */
const ARTIFACTS = resolve(__dirname, '../../test-artifacts/console');
const AXE = require.resolve('axe-core/axe.min.js');

/** An operator token for the demo bot, shown to users as "Ana". */
const operatorToken = () =>
  mintToken({ sub: 'ana', name: 'Ana', roles: ['OPERATOR'], agentIds: [DEMO_AGENT_ID] } as never, TEST_ADMIN_JWT_SECRET);

describe('operator console and the demo page side by side in Chromium (docs/handoff.md)', () => {
  let browser: Browser;
  let hub: TestHub;
  let user: Page;
  let ops: Page;
  const shots: { name: string; user: Buffer; console: Buffer }[] = [];

  beforeAll(async () => {
    browser = await launchChromium();
    hub = await startHub({ DEMO_ENABLED: 'true' });
    user = await browser.newPage({ viewport: { width: 440, height: 720 } });
    ops = await browser.newPage({ viewport: { width: 1280, height: 720 } });
    await mkdir(ARTIFACTS, { recursive: true });
  });
  afterAll(async () => {
    // One image per step with both pages side by side, for people to look at.
    const page = await browser.newPage({ viewport: { width: 1720, height: 720 } });
    for (const shot of shots) {
      const img = (b: Buffer) => `<img src="data:image/png;base64,${b.toString('base64')}" style="display:block">`;
      await page.setContent(`<body style="margin:0;display:flex;background:#888">${img(shot.console)}${img(shot.user)}</body>`);
      await page.screenshot({ path: resolve(ARTIFACTS, `${shot.name}-side-by-side.png`) });
    }
    await browser?.close();
    await hub?.close();
  });

  /** Screenshots of both pages (the user's: the demo page, or `tab`), kept as artifacts, and once more side by side. */
  async function snapshot(name: string, tab = user): Promise<void> {
    const [u, c] = await Promise.all([
      tab.screenshot({ path: resolve(ARTIFACTS, `${name}-user.png`) }),
      ops.screenshot({ path: resolve(ARTIFACTS, `${name}-console.png`) }),
    ]);
    shots.push({ name, user: u, console: c });
  }

  const send = async (text: string) => {
    await user.fill('relay-chat textarea', text);
    await user.press('relay-chat textarea', 'Enter');
  };

  it('walks a whole handoff: the bot asks, the operator takes over, writes, hands back, and the bot answers again', async () => {
    await user.goto(`${hub.url}/`);
    await user.waitForSelector('relay-chat .panel[data-online="true"]');
    const userDebug: unknown[] = [];
    await user.exposeFunction('__debugSeen', (t: unknown) => userDebug.push(t));

    await ops.goto(`${hub.url}/console`);
    await ops.fill('#token', operatorToken());
    expect(await ops.inputValue('#agent')).toBe(DEMO_AGENT_ID); // suggested from the token's agentIds
    await ops.press('#token', 'Tab');
    await ops.click('button[type="submit"]');
    await ops.waitForSelector('#who:has-text("Ana")');

    // The user asks for a person; the bot says so, traces it, and hands off.
    await send('I want a human please');
    await user.waitForSelector('relay-chat .msg.bot:has-text("Let me find a person")');
    const waiting = ops.locator('#list li[role="option"]').first();
    await waiting.locator('.badge[data-control="waiting"]').waitFor();
    expect(await waiting.locator('.sub').textContent()).toContain('The user asked for a person');

    // Keyboard: the list has focus; Enter opens the selected (waiting) conversation.
    await ops.focus('#list');
    await ops.keyboard.press('ArrowDown');
    await ops.keyboard.press('ArrowUp');
    await ops.keyboard.press('Enter');
    await ops.waitForSelector('#transcript .msg.user:has-text("I want a human please")');
    await ops.waitForSelector('#transcript .msg.bot:has-text("Let me find a person")');
    await ops.waitForSelector('#conversation-info:has-text("Waiting")');
    // The bot's trace of this conversation is beside it.
    await ops.waitForSelector('#traces details summary:has-text("handoff")');
    await ops.click('#traces details summary');
    expect(await ops.locator('#traces pre').first().textContent()).toContain('"received": "I want a human please"');
    await snapshot('1-waiting');

    // Take over: every tab of the user sees the operator join.
    await ops.click('#takeover');
    await user.waitForSelector('relay-chat .msg.sys:has-text("Ana joined the conversation")');
    await user.waitForSelector('relay-chat .title:has-text("Ana")');
    await ops.waitForSelector('#conversation-info:has-text("You hold")');

    // The user writes: the operator sees it, the bot keeps quiet.
    await send('Is anyone there?');
    await ops.waitForSelector('#transcript .msg.user:has-text("Is anyone there?")');
    await user.waitForSelector('relay-chat .msg.user[data-delivery="sent"]:has-text("Is anyone there?")');

    // The operator answers with their name.
    await ops.fill('#reply-text', 'Hi, I am Ana. How can I help?');
    await ops.press('#reply-text', 'Enter');
    // An operator's message stands on the bot's side under the operator's name (and initial).
    const said = user.locator('relay-chat .msg.bot:has-text("Hi, I am Ana")');
    await said.waitFor();
    expect(await said.locator('.who').innerText()).toMatch(/Ana$/);
    expect(await ops.locator('#transcript .msg.bot:has-text("Hi, I am Ana") .who').innerText()).toMatch(/Ana$/);
    expect(await user.locator('relay-chat .msg.bot:has-text("echo: Is anyone there?")').count()).toBe(0);
    await snapshot('2-held');

    // Hand back: the user is back with the assistant, which answers again (streamed, seen live in the console).
    await ops.click('#release');
    await user.waitForSelector('relay-chat .msg.sys:has-text("back with the assistant")');
    await send('thanks, bot');
    await user.waitForSelector('relay-chat .msg.bot:not([data-streaming]):has-text("echo: thanks, bot")');
    await ops.waitForSelector('#transcript .msg.bot:not([data-streaming]):has-text("echo: thanks, bot")');
    await ops.waitForSelector('#traces details summary:has-text("{")');
    await snapshot('3-back');

    // The traces reached the console and never the user's page.
    // The page and the widget's shadow root, which the page's serialization leaves out.
    const userHtml = (await user.content()) + (await user.evaluate(() => document.querySelector('relay-chat')!.shadowRoot!.innerHTML));
    expect(userHtml).not.toContain('handledBy');
    expect(userHtml).not.toContain('"step"');
    expect(userDebug).toEqual([]);
    expect(await ops.locator('#traces details').count()).toBeGreaterThanOrEqual(2);
  });

  it("draws the transcript with the widget's renderer: markdown and every part, a streamed answer growing live; the operator decides approvals", async () => {
    const bot = await hub.agent('parts-bot');
    // Counted at the bot's socket, before the SDK's dedupe: the hub must deliver each decision once.
    const frames: { id: string; approved: boolean }[] = [];
    (bot as unknown as { socket: { on(e: string, f: (a: AgentApproval) => void): void } }).socket.on('approval', (a) => frames.push(a));
    const userSocket = await hub.client('parts-bot', { sub: 'pat' });
    const token = mintToken({ sub: 'ben', name: 'Ben', roles: ['OPERATOR'], agentIds: ['parts-bot'] } as never, TEST_ADMIN_JWT_SECRET);
    // The console's socket, passed through; while `hold` is set, what the hub says of approval
    // `hold` is dropped, so the console still offers a decision the user made already.
    let hold: string | undefined;
    let held!: () => void;
    const dropped = new Promise<void>((r) => (held = r));
    await ops.routeWebSocket(/\/socket\.io\//, (ws) => {
      const server = ws.connectToServer();
      ws.onMessage((m) => server.send(m));
      server.onMessage((m) => {
        if (hold && typeof m === 'string' && m.includes(hold)) return held();
        ws.send(m);
      });
    });
    await ops.goto(`${hub.url}/console`);
    await ops.evaluate(() => sessionStorage.clear());
    await ops.reload();
    await ops.fill('#token', token);
    await ops.press('#token', 'Tab');
    await ops.click('button[type="submit"]');
    await ops.click('#list li[role="option"]:has-text("pat")');
    await ops.waitForSelector('#conversation-title:has-text("pat")');

    await userSocket.emitWithAck('message', { clientMessageId: 'p1', text: 'Can I get a refund for **order 42**?' });
    const view = ops.locator('#transcript .msg.user:has-text("order 42")');
    await view.waitFor();
    // A user's text is plain: their asterisks stay asterisks.
    expect(await view.innerText()).toContain('**order 42**');

    const stream = await bot.stream('pat');
    const thinking = stream.reasoning('Checking the order');
    await thinking.write(' and the refund policy.');
    const tool = stream.tool({ toolName: 'refund', title: 'Refund order 42' });
    await tool.inputAvailable({ order: 42, amount: 19.9 });
    await tool.requestApproval();
    await stream.source({ url: 'https://example.com/policy', title: 'Refund policy' });
    await stream.file({ url: 'https://example.com/receipt.pdf', mediaType: 'application/pdf', filename: 'receipt.pdf' });
    await stream.write('Your order **42** qualifies');
    const answer = ops.locator('#transcript .msg.bot[data-streaming]');
    await answer.locator('strong:has-text("42")').waitFor();
    // It grows live, markdown and all.
    await stream.write(': see `refund()` in\n\n- the policy\n- your receipt');
    await answer.locator('li:has-text("your receipt")').waitFor();
    expect(await answer.locator('code:has-text("refund()")').count()).toBe(1);
    // Reasoning collapsed, the tool step with its approval (the operator may decide it too), the source and the file.
    expect(await answer.locator('details.step.reasoning').getAttribute('open')).toBeNull();
    await answer.locator('.step.tool:has-text("Refund order 42")').waitFor();
    const approve = answer.locator('.approval button.primary');
    expect(await approve.isEnabled()).toBe(true);
    await answer.locator('.sources a[href="https://example.com/policy"]').waitFor();
    await answer.locator('a[href="https://example.com/receipt.pdf"]').waitFor();
    await snapshot('4-parts-streaming');

    await stream.suggest(['Yes, refund it', 'No thanks']);
    await stream.end();
    await ops.waitForSelector('#transcript .msg.bot:not([data-streaming]):has-text("your receipt")');
    await ops.waitForSelector('#transcript .suggested:has-text("Yes, refund it")');
    // The user decides in their tab; the console shows the decision.
    const approvalId = tool.approval!;
    expect(await userSocket.emitWithAck('approval', { messageId: stream.id, approvalId, approved: true })).toMatchObject({ ok: true });
    await ops.waitForSelector('#transcript .approval .decided:has-text("pat")');
    await snapshot('5-parts-ended');

    // The operator approves a tool call from the console: the user's widget tab shows it decided
    // by the operator, and the bot receives it once.
    const tab = await widgetPage(browser, hub, 'parts-bot', { sub: 'pat', data: { open: '' }, viewport: { width: 440, height: 720 } });
    try {
      await online(tab.page);
      const second = await bot.stream('pat');
      const call = second.tool({ toolName: 'refund', title: 'Refund order 43' });
      await call.inputAvailable({ order: 43 });
      await call.requestApproval();
      const asked = ops.locator('#transcript .approval[aria-label="Refund order 43"]');
      await w(tab.page, '.approval[aria-label="Refund order 43"] button:text("Approve")').waitFor();
      await asked.locator('button:text("Approve")').click();
      const decided = w(tab.page, '.approval[aria-label="Refund order 43"] .decided');
      await decided.waitFor();
      expect(await decided.innerText()).toBe('Approved by Ben');
      expect(await w(tab.page, '.approval[aria-label="Refund order 43"] button').count()).toBe(0);
      await asked.locator('.decided:has-text("Approved by Ben")').waitFor();
      expect(await ops.textContent('#status')).toBe('You approved it.');
      expect(await call.decision()).toMatchObject({ approved: true });
      await snapshot('7-operator-approved', tab.page);

      // A decision the user made first, which the console has not heard of yet: refused, and said.
      const third = second.tool({ toolName: 'refund', title: 'Refund order 44' });
      await third.requestApproval();
      const stale = ops.locator('#transcript .approval[aria-label="Refund order 44"]');
      await stale.locator('button:text("Deny")').waitFor();
      hold = third.approval!;
      expect(await userSocket.emitWithAck('approval', { messageId: second.id, approvalId: third.approval, approved: true })).toMatchObject({
        ok: true,
      });
      await w(tab.page, '.approval[aria-label="Refund order 44"] .decided:has-text("Approved by you")').waitFor();
      await dropped;
      await stale.locator('button:text("Deny")').click();
      await stale.locator('p[role="status"]:has-text("Already approved by pat")').waitFor();
      expect(await ops.textContent('#status')).toBe('Already approved by pat.');
      expect(await ops.getAttribute('#status', 'data-kind')).toBe('error');
      // Its buttons come back; the user's decision stands.
      expect(await stale.locator('button:text("Deny")').isEnabled()).toBe(true);
      expect(await third.decision()).toMatchObject({ approved: true });
      await snapshot('8-operator-refused', tab.page);
      hold = undefined;
      await second.end();
      expect(frames.filter((f) => f.id === call.approval).map((f) => f.approved)).toEqual([true]);
      expect(frames.filter((f) => f.id === third.approval).map((f) => f.approved)).toEqual([true]);
    } finally {
      await tab.context.close();
    }

    // A phone's width and dark mode: the same transcript, kept as artifacts to look at.
    await ops.setViewportSize({ width: 390, height: 844 });
    await ops.emulateMedia({ colorScheme: 'dark' });
    await ops.locator('#transcript').scrollIntoViewIfNeeded();
    await ops.screenshot({ path: resolve(ARTIFACTS, '6-parts-phone-dark-console.png'), fullPage: true });
    await ops.emulateMedia({ colorScheme: 'light' });
    await ops.screenshot({ path: resolve(ARTIFACTS, '6-parts-phone-console.png'), fullPage: true });
    await ops.setViewportSize({ width: 1280, height: 720 });
  });

  it('is axe-clean and keyboard-usable', async () => {
    // Evaluated through the DevTools protocol: the page's policy runs no inline script, rightly.
    await ops.evaluate(await readFile(AXE, 'utf8'));
    const result = (await ops.evaluate(() => (window as unknown as { axe: { run(): Promise<unknown> } }).axe.run())) as {
      violations: { id: string; nodes: { target: string[] }[] }[];
    };
    expect(result.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`)).toEqual([]);
    await ops.emulateMedia({ colorScheme: 'dark' });
    const dark = (await ops.evaluate(() => (window as unknown as { axe: { run(): Promise<unknown> } }).axe.run())) as typeof result;
    await ops.emulateMedia({ colorScheme: 'light' });
    expect(dark.violations.map((v) => `dark ${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`)).toEqual([]);
    // Every control is reachable by Tab.
    const reached = new Set<string>();
    await ops.focus('#list');
    for (let i = 0; i < 12; i++) {
      await ops.keyboard.press('Tab');
      reached.add(await ops.evaluate(() => document.activeElement?.id || document.activeElement?.tagName || ''));
    }
    expect([...reached]).toEqual(expect.arrayContaining(['transcript-view', 'takeover']));
  });
});
