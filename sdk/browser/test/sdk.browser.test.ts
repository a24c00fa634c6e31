import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { AgentInboundMessage } from '../../../src/protocol';
import type { RelayAgent } from '../../../src/sdk/agent';
import { startHub, type TestHub } from '../../../test/helpers/hub';
import { mintToken } from '../../../test/helpers/tokens';
import { chromiumForFile, launchChromium } from '../../../test/browser/chromium';

/** What the page scripts below keep on `window`. */
type PageWindow = Window & {
  RelayChat: new (options: object) => PageChat;
  mintToken(): Promise<string>;
  chat: PageChat;
  sends: Promise<{ id: string; ts: string }>[];
  states: string[];
};
type PageChat = {
  state: string;
  on(event: string, listener: (payload: never) => void): () => void;
  send(text: string): Promise<{ id: string; ts: string }>;
  close(): void;
};

describe('embed SDK in Chromium against a real hub', () => {
  const browser = chromiumForFile();
  let hub: TestHub;
  let agent: RelayAgent;
  let context: BrowserContext;
  let page: Page;
  let received: AgentInboundMessage[];

  beforeEach(async () => {
    hub = await startHub();
    agent = await hub.agent('bot-1');
    received = [];
    agent.onMessage(async (m) => {
      received.push(m);
      await agent.reply(m.from, `echo: ${m.text}`, undefined, m.id);
    });
    context = await browser().newContext();
    page = await context.newPage();
    // The page asks Node for tokens, as an integrator's page asks its backend.
    await page.exposeFunction('mintToken', () => mintToken({ sub: 'browser-user', agentIds: ['bot-1'] }));
    // Any same-origin document will do: the SDK needs the hub's origin, not a page of its own.
    await page.goto(`${hub.url}/health/live`);
  });
  afterEach(async () => {
    await context?.close();
    await hub?.close();
  });

  /** Loads the ES module build the way an integrator's page does, and exposes the class. */
  async function loadEsm(): Promise<void> {
    await page.addScriptTag({ type: 'module', content: `import { RelayChat } from '/sdk/embed.mjs'; window.RelayChat = RelayChat;` });
    await page.waitForFunction(() => 'RelayChat' in window);
  }

  async function connectChat(options: Record<string, unknown> = {}): Promise<void> {
    await page.evaluate(
      ({ url, options }) => {
        const w = window as unknown as PageWindow;
        w.states = [];
        w.chat = new w.RelayChat({ url, agentId: 'bot-1', token: () => w.mintToken(), ...options });
        w.chat.on('state', ({ state, code }: { state: string; code?: string }) => w.states.push(code ? `${state}:${code}` : state));
      },
      { url: hub.url, options },
    );
    await page.waitForFunction(() => (window as unknown as PageWindow).chat.state === 'connected');
  }

  it('serves both builds cross-origin-loadable', async () => {
    for (const file of ['embed.mjs', 'embed.js']) {
      const res = await fetch(`${hub.url}/sdk/${file}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/javascript/);
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
      expect(res.headers.get('cross-origin-resource-policy')).toBe('cross-origin');
    }
  });

  it('chats through the ES module build: send is acked with the id the bot saw, the reply arrives', async () => {
    await loadEsm();
    await connectChat();
    const { ack, reply } = await page.evaluate(async () => {
      const w = window as unknown as PageWindow;
      const reply = new Promise<{ id: string; text: string; replyTo?: string }>((resolve) => w.chat.on('message', resolve));
      const ack = await w.chat.send('hello from chromium');
      return { ack, reply: await reply };
    });
    expect(received).toHaveLength(1);
    expect(received[0]).toMatchObject({ id: ack.id, from: 'browser-user', text: 'hello from chromium' });
    expect(reply).toMatchObject({ text: 'echo: hello from chromium', replyTo: ack.id });
  });

  it('exposes the class itself as the global RelayChat from the script-tag build', async () => {
    await page.addScriptTag({ url: '/sdk/embed.js' });
    expect(await page.evaluate(() => typeof (window as unknown as PageWindow).RelayChat)).toBe('function');
    await connectChat();
    const ack = await page.evaluate(() => (window as unknown as PageWindow).chat.send('via script tag'));
    expect(received.map((m) => [m.id, m.text])).toEqual([[ack.id, 'via script tag']]);
  });

  it('queues sends while the browser is offline and flushes them in order, once each, when it is back', async () => {
    await loadEsm();
    // A minute-long backoff: only the `online` event can explain a prompt reconnect.
    await connectChat({ backoff: { baseMs: 60_000, capMs: 60_000 } });
    await page.evaluate(() => {
      Math.random = () => 0.99;
    });
    await context.setOffline(true);
    await page.waitForFunction(() => (window as unknown as PageWindow).chat.state === 'connecting');
    await page.evaluate(() => {
      const w = window as unknown as PageWindow;
      w.sends = ['one', 'two', 'three'].map((text) => w.chat.send(text));
    });
    await context.setOffline(false);
    const acks = await page.evaluate(() => Promise.all((window as unknown as PageWindow).sends));
    expect(received.map((m) => m.text)).toEqual(['one', 'two', 'three']);
    expect(received.map((m) => m.id)).toEqual(acks.map((a) => a.id));
    expect(await page.evaluate(() => (window as unknown as PageWindow).states)).toEqual([
      'connecting',
      'connected',
      'connecting',
      'connected',
    ]);
  });

  it('shows a reply sent while the browser was offline once, replayed from the log when it is back', async () => {
    // Counted at the socket, before the SDK's dedupe: the hub must send it exactly once.
    const frames: string[] = [];
    page.on('websocket', (ws) =>
      ws.on('framereceived', ({ payload }) => {
        if (String(payload).includes('while you were away')) frames.push(String(payload));
      }),
    );
    await loadEsm();
    // A minute-long backoff: only the `online` event can explain a prompt reconnect.
    await connectChat({ backoff: { baseMs: 60_000, capMs: 60_000 } });
    await page.evaluate(() => {
      Math.random = () => 0.99;
      const w = window as unknown as PageWindow & { got: { id: string; text: string; author: string }[]; connects: unknown[] };
      w.got = [];
      w.connects = [];
      w.chat.on('message', (m: never) => w.got.push(m));
      w.chat.on('state', (s: { state: string; recovered?: boolean }) => {
        if (s.state === 'connected') w.connects.push(s.recovered ?? 'absent');
      });
    });
    // Something seen before going offline: the reconnect resumes after it.
    await agent.reply('browser-user', 'before');
    await page.waitForFunction(() => (window as unknown as { got: unknown[] }).got.length === 1);

    await context.setOffline(true);
    await page.waitForFunction(() => (window as unknown as PageWindow).chat.state === 'connecting');
    // Acked `ok` although no socket of the user is connected: the reply is in the log.
    const away = await agent.reply('browser-user', 'while you were away');
    await context.setOffline(false);
    await page.waitForFunction(() => (window as unknown as { connects: unknown[] }).connects.length === 1);
    // One more live message after the replay: anything doubled would have arrived before it.
    const after = await agent.reply('browser-user', 'after');
    await page.waitForFunction((id) => (window as unknown as { got: { id: string }[] }).got.some((m) => m.id === id), after.id);

    const got = await page.evaluate(() => (window as unknown as { got: { id: string; text: string; author: string }[] }).got);
    expect(got.map((m) => [m.text, m.author])).toEqual([
      ['before', 'agent'],
      ['while you were away', 'agent'],
      ['after', 'agent'],
    ]);
    expect(got[1].id).toBe(away.id);
    expect(await page.evaluate(() => (window as unknown as { connects: unknown[] }).connects)).toEqual([true]);
    expect(frames).toHaveLength(1);
  });

  it('resumes after a page reload from the id kept in sessionStorage, for this user only', async () => {
    await loadEsm();
    await connectChat();
    const seen = await agent.reply('browser-user', 'seen before the reload');
    await page.waitForFunction(() => Object.keys(sessionStorage).length === 1);
    const stored = await page.evaluate(
      (id) => Object.entries(sessionStorage).map(([key, value]) => [JSON.parse(key.slice(key.indexOf('['))), value === id]),
      seen.id,
    );
    expect(stored).toEqual([[[`${hub.url}/ws/client`, '/socket.io/', 'bot-1', 'browser-user'], true]]);

    await page.reload();
    await loadEsm();
    await connectChat();
    // The socket of the page before the reload (if the hub has not seen it close yet) carried none.
    const resumed = [...hub.hub.io.of('/ws/client').sockets.values()]
      .map((socket) => (socket.handshake.auth as { lastMessageId?: string }).lastMessageId)
      .filter((id) => id !== undefined);
    expect(resumed).toEqual([seen.id]);
  });

  it('refreshes a getter token in-band before it expires, keeping the same session', async () => {
    let minted = 0;
    let refreshedTwice!: () => void;
    const twice = new Promise<void>((resolve) => (refreshedTwice = resolve));
    // 62 s tokens: the hub announces auth:expiring 60 s before exp, so every 2 s.
    await page.exposeFunction('shortToken', () => {
      if (++minted === 3) refreshedTwice();
      return mintToken({ sub: 'browser-user', expiresIn: 62 });
    });
    await loadEsm();
    await page.evaluate((url) => {
      const w = window as unknown as PageWindow & { shortToken(): Promise<string> };
      w.states = [];
      w.chat = new w.RelayChat({ url, agentId: 'bot-1', token: () => w.shortToken() });
      w.chat.on('state', ({ state }: { state: string }) => w.states.push(state));
    }, hub.url);
    await page.waitForFunction(() => (window as unknown as PageWindow).chat.state === 'connected');
    const sessionSockets = [...hub.hub.io.of('/ws/client').sockets.keys()];
    await twice;
    await page.evaluate(() => (window as unknown as PageWindow).chat.send('still here'));
    expect(received.map((m) => m.text)).toEqual(['still here']);
    expect(await page.evaluate(() => (window as unknown as PageWindow).states)).toEqual(['connecting', 'connected']);
    expect([...hub.hub.io.of('/ws/client').sockets.keys()]).toEqual(sessionSockets);
  });

  it('ends in TOKEN_EXPIRED when a fixed token expires', async () => {
    await loadEsm();
    const token = mintToken({ sub: 'browser-user', expiresIn: 1 });
    const final = await page.evaluate(
      ({ url, token }) =>
        new Promise((resolve) => {
          const w = window as unknown as PageWindow;
          const chat = new w.RelayChat({ url, agentId: 'bot-1', token });
          chat.on('state', (s: { state: string; code?: string }) => s.state === 'disconnected' && resolve(s));
        }),
      { url: hub.url, token },
    );
    expect(final).toEqual({ state: 'disconnected', code: 'TOKEN_EXPIRED' });
  });

  it('stops at the handshake with TOKEN_EXPIRED when a fixed token is already expired, though the hub marks it retryable', async () => {
    await loadEsm();
    // Past exp + JWT_CLOCK_TOLERANCE_S (5 s): the hub refuses the handshake itself.
    const token = mintToken({ sub: 'browser-user', expiresIn: -60 });
    const states = await page.evaluate(
      ({ url, token }) =>
        new Promise<string[]>((resolve) => {
          const w = window as unknown as PageWindow;
          const seen: string[] = [];
          const chat = new w.RelayChat({ url, agentId: 'bot-1', token });
          chat.on('state', ({ state, code }: { state: string; code?: string }) => {
            seen.push(code ? `${state}:${code}` : state);
            if (state === 'disconnected') resolve(seen);
          });
        }),
      { url: hub.url, token },
    );
    // Never connected: a retry could only present the same token again.
    expect(states).toEqual(['connecting', 'disconnected:TOKEN_EXPIRED']);
    expect(hub.hub.io.of('/ws/client').sockets.size).toBe(0);
  });

  it('retries an expired handshake with a fresh token from the getter', async () => {
    const tokens = [mintToken({ sub: 'browser-user', expiresIn: -60 }), mintToken({ sub: 'browser-user' })];
    let calls = 0;
    await page.exposeFunction('nextToken', () => tokens[Math.min(calls++, tokens.length - 1)]);
    await loadEsm();
    await page.evaluate((url) => {
      const w = window as unknown as PageWindow & { nextToken(): Promise<string> };
      w.states = [];
      w.chat = new w.RelayChat({ url, agentId: 'bot-1', token: () => w.nextToken(), backoff: { baseMs: 50 } });
      w.chat.on('state', ({ state, code }: { state: string; code?: string }) => w.states.push(code ? `${state}:${code}` : state));
    }, hub.url);
    await page.waitForFunction(() => (window as unknown as PageWindow).chat.state === 'connected');
    expect(calls).toBe(2);
    expect(await page.evaluate(() => (window as unknown as PageWindow).states)).toEqual(['connecting', 'connected']);
  });

  it('ends with a terminal state carrying the code when the token does not admit the bot', async () => {
    await page.exposeFunction('otherBotToken', () => mintToken({ sub: 'browser-user', agentIds: ['other-bot'] }));
    await loadEsm();
    const final = await page.evaluate(
      (url) =>
        new Promise((resolve) => {
          const w = window as unknown as PageWindow & { otherBotToken(): Promise<string> };
          const chat = new w.RelayChat({ url, agentId: 'bot-1', token: () => w.otherBotToken() });
          chat.on('state', (s: { state: string; code?: string }) => s.state === 'disconnected' && resolve(s));
        }),
      hub.url,
    );
    expect(final).toEqual({ state: 'disconnected', code: 'AGENT_NOT_ALLOWED' });
  });
});

describe('embed SDK on an integrator site (another origin) in Chromium', () => {
  let browser: Browser;
  let site: Server;
  let siteUrl: string;
  const hubs: TestHub[] = [];

  beforeAll(async () => {
    browser = await launchChromium();
    site = createServer((_req, res) =>
      res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>integrator site</title>'),
    );
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => site?.close(resolve));
    for (const hub of hubs) await hub.close();
  });

  /** Opens the site and imports the SDK from the hub, cross-origin, as a third-party embed does. */
  async function openSite(hub: TestHub): Promise<Page> {
    const page = await browser.newPage();
    await page.exposeFunction('mintToken', () => mintToken({ sub: 'site-user' }));
    await page.goto(siteUrl);
    await page.addScriptTag({
      type: 'module',
      content: `import { RelayChat } from '${hub.url}/sdk/embed.mjs'; window.RelayChat = RelayChat;`,
    });
    await page.waitForFunction(() => 'RelayChat' in window);
    return page;
  }

  function runChat(page: Page, hubUrl: string): Promise<{ state: string; code?: string; ack?: { id: string } }> {
    return page.evaluate(
      (url) =>
        new Promise((resolve) => {
          const w = window as unknown as PageWindow;
          const chat = new w.RelayChat({ url, agentId: 'bot-1', token: () => w.mintToken() });
          chat.on('state', (s: { state: string; code?: string }) => {
            if (s.state === 'connected') void chat.send('from the site').then((ack) => resolve({ ...s, ack }));
            if (s.state === 'disconnected') resolve(s);
          });
        }),
      hubUrl,
    );
  }

  it('loads the SDK from the hub and chats from the site origin', async () => {
    const hub = await startHub();
    hubs.push(hub);
    const agent = await hub.agent('bot-1');
    const received: AgentInboundMessage[] = [];
    agent.onMessage((m) => void received.push(m));
    const page = await openSite(hub);
    const outcome = await runChat(page, hub.url);
    expect(outcome.state).toBe('connected');
    expect(received.map((m) => [m.id, m.text, m.from])).toEqual([[outcome.ack!.id, 'from the site', 'site-user']]);
    await page.close();
  });

  it('stops with ORIGIN_NOT_ALLOWED when the site is not in CORS_ORIGINS', async () => {
    const hub = await startHub({ CORS_ORIGINS: 'https://allowed.example' });
    hubs.push(hub);
    const page = await openSite(hub);
    await expect(runChat(page, hub.url)).resolves.toEqual({ state: 'disconnected', code: 'ORIGIN_NOT_ALLOWED' });
    await page.close();
  });
});
