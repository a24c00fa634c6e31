import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Browser, Page, Route } from 'playwright-core';
import { DEMO_AGENT_ID } from '../../src/demo/demo.routes';
import { mintToken } from '../helpers/tokens';
import { launchChromium } from './chromium';
import { waitFor } from '../helpers/wait';

const ROOT = resolve(__dirname, '../..');
const MAIN = join(ROOT, 'dist/main.js');
// Fixed secrets, so the page's localStorage user and the admin token below stay valid across restarts.
const JWT_SECRET = 'demo-restart-secret-long-enough-for-hs256!!';
const ADMIN_JWT_SECRET = 'demo-restart-admin-secret-long-enough-too!!';
const AGENT_KEY = 'demo-restart-agent-key-0123456789';

/** A port nothing listens on now, reused by every start of the hub in one test. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as { port: number };
  await new Promise((done) => server.close(done));
  return port;
}

/** The built hub (`node dist/main.js`) as its own process, the way `npm start` runs it. */
class HubProcess {
  private child: ChildProcess | undefined;
  private output = '';

  constructor(readonly port: number) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Starts the process and resolves once it answers `/health/live`. */
  async start(): Promise<void> {
    const child = spawn(process.execPath, [MAIN], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        PATH: process.env.PATH,
        NODE_ENV: 'development',
        PORT: String(this.port),
        HOST: '127.0.0.1',
        JWT_SECRET,
        ADMIN_JWT_SECRET,
        AGENT_API_KEYS: AGENT_KEY,
        LOG_LEVEL: 'warn',
        DEMO_ENABLED: 'true',
        // A SIGTERM drain spreads closes over this; short keeps the test fast.
        SHUTDOWN_GRACE_MS: '1000',
        OPENAPI_SPEC_FILE: join(tmpdir(), `relay-hub-demo-restart-${process.pid}.json`),
      },
    });
    this.child = child;
    child.stdout.on('data', (chunk: Buffer) => (this.output += chunk));
    child.stderr.on('data', (chunk: Buffer) => (this.output += chunk));
    const exited = new Promise<never>((_, reject) =>
      child.once('exit', (code, signal) => reject(new Error(`hub exited during start-up (${code ?? signal}):\n${this.output}`))),
    );
    await Promise.race([this.live(), exited]);
  }

  /** Sends `signal` and resolves once the process is gone. */
  async stop(signal: NodeJS.Signals): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((done) => child.once('exit', done));
    child.kill(signal);
    await exited;
  }

  /**
   * Whether the hub is up and its demo echo bot has a connected runtime, asked over REST as an admin;
   * false when nothing answers.
   */
  async botOnline(): Promise<boolean> {
    const admin = mintToken({ sub: 'demo-restart-admin', roles: ['ADMIN'], expiresIn: 60 }, ADMIN_JWT_SECRET);
    try {
      const res = await fetch(`${this.url}/agents/${DEMO_AGENT_ID}`, { headers: { authorization: `Bearer ${admin}` } });
      return res.ok && (await res.json()).data.online === true;
    } catch {
      return false;
    }
  }

  // No event crosses the process boundary before the port opens, so start-up is probed.
  private async live(): Promise<void> {
    await waitFor(
      () =>
        fetch(`${this.url}/health/live`).then(
          (r) => r.ok,
          () => false,
        ), // a refusal: not listening yet
      15_000,
      `the hub to answer; its output:\n${this.output}`,
      50,
    );
  }
}

describe('demo page across a hub restart (hub as a child process, Chromium)', () => {
  let browser: Browser;
  let hub: HubProcess | undefined;
  let page: Page | undefined;

  beforeAll(async () => {
    if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: run \`node scripts/build.mjs\` first`);
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });
  afterEach(async () => {
    await page?.context().close();
    await hub?.stop('SIGKILL');
    page = undefined;
    hub = undefined;
  });

  const echoes = (p: Page) => p.locator('relay-chat .msg.bot .md').allTextContents();

  async function type(p: Page, text: string): Promise<void> {
    await p.fill('relay-chat textarea', text);
    await p.press('relay-chat textarea', 'Enter');
  }

  it.each(['SIGKILL', 'SIGTERM'] as const)(
    'reconnects by itself with a fresh token after a %s restart and delivers what was typed meanwhile, once each, in order',
    async (signal) => {
      hub = new HubProcess(await freePort());
      await hub.start();
      const running = hub;
      page = await browser.newPage();

      // Counts the page's successful token fetches; failed ones (hub down) get no response.
      let tokensIssued = 0;
      page.on('response', (res) => {
        if (res.url().endsWith('/demo/token') && res.request().method() === 'POST' && res.status() === 201) tokensIssued++;
      });
      // A hub that has just started listening may not have its in-process echo bot connected yet, and
      // the outbox would flush into AGENT_OFFLINE acks. This test is about the hub going away, not
      // the bot, so until the bot is online the token route is refused the way a down hub refuses it.
      await page.route('**/demo/token', async (route: Route) => {
        if (await running.botOnline()) await route.continue();
        else await route.abort('connectionrefused');
      });

      // A 1 s backoff cap (read by the demo page) keeps the wait after the restart short and bounded.
      await page.goto(`${hub.url}/?backoffCapMs=1000`);
      await page.waitForSelector('relay-chat .panel[data-state="connected"]');
      await page.waitForSelector('relay-chat .panel[data-online="true"]');
      await type(page, 'before');
      await page.waitForSelector('relay-chat .msg.user[data-delivery="sent"]');
      // The bot streams its answer: wait for it to end, not to start.
      await page.waitForFunction(
        () => document.querySelector('relay-chat')!.shadowRoot!.querySelectorAll('.msg.bot:not([data-streaming])').length === 1,
      );
      expect(await echoes(page)).toEqual(['echo: before']);

      await hub.stop(signal);
      await page.waitForSelector('relay-chat .panel:not([data-state="connected"])');

      const whileDown = ['while down 1', 'while down 2', 'while down 3'];
      for (const text of whileDown) await type(page, text);
      // Waiting in the SDK outbox, not failed.
      expect(await page.locator('relay-chat .msg.user[data-delivery="sending"] .bubble').allTextContents()).toEqual(whileDown);

      const tokensBeforeRestart = tokensIssued;
      await hub.start();
      await page.waitForSelector('relay-chat .panel[data-state="connected"]');
      expect(tokensIssued).toBeGreaterThan(tokensBeforeRestart);

      await page.waitForFunction(
        () => document.querySelector('relay-chat')!.shadowRoot!.querySelectorAll('.msg.user[data-delivery="sent"]').length === 4,
      );
      // One more round trip: the bot answers in order on one socket, so a duplicate of an earlier
      // message would show up before this echo.
      await type(page, 'after');
      await page.waitForFunction(() =>
        Array.from(document.querySelector('relay-chat')!.shadowRoot!.querySelectorAll('.msg.bot')).some(
          (el) => el.querySelector('.md')?.textContent === 'echo: after',
        ),
      );
      await page.waitForFunction(
        () => document.querySelector('relay-chat')!.shadowRoot!.querySelectorAll('.msg.bot[data-streaming]').length === 0,
      );
      expect(await echoes(page)).toEqual(['before', ...whileDown, 'after'].map((text) => `echo: ${text}`));
      expect(await page.locator('relay-chat .msg.user[data-delivery="failed"]').count()).toBe(0);
      expect(await page.locator('relay-chat .panel').getAttribute('data-state')).toBe('connected');
    },
    30_000,
  );
});
