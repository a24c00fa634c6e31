import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { MessageEnd, MessagePart } from '../../src/protocol';
import { DEMO_AGENT_ID } from '../../src/demo/demo.routes';
import { startHub, type TestHub } from '../helpers/hub';
import { mintToken } from '../helpers/tokens';
import { launchChromium } from './chromium';
import { DEMO_PARTS_TYPES } from '../fixtures/answers';

type PageWindow = Window & {
  RelayChat: new (options: object) => {
    on(event: string, listener: (payload: never) => void): () => void;
    send(text: string): Promise<unknown>;
    approve(messageId: string, approvalId: string, approved: boolean): Promise<unknown>;
    state: string;
  };
  mintToken(): Promise<string>;
};

/** The built browser SDK in Chromium: the demo bot's parts, an approval given in the page, the hub's image shown. */
describe('browser SDK parts in Chromium against a real hub', () => {
  let browser: Browser;
  let hub: TestHub;
  let context: BrowserContext;
  let page: Page;

  beforeAll(async () => {
    browser = await launchChromium();
    hub = await startHub({ DEMO_ENABLED: 'true' });
    context = await browser.newContext();
    page = await context.newPage();
    await page.exposeFunction('mintToken', () => mintToken({ sub: 'chromium-parts', agentIds: [DEMO_AGENT_ID] }));
    await page.goto(`${hub.url}/health/live`);
    await page.addScriptTag({ type: 'module', content: `import { RelayChat } from '/sdk/embed.mjs'; window.RelayChat = RelayChat;` });
    await page.waitForFunction(() => 'RelayChat' in window);
  });
  afterAll(async () => {
    await context?.close();
    await hub?.close();
    await browser?.close();
  });

  it('holds the whole message as parts stream in, approves the tool call, and shows the image the hub serves', async () => {
    const result = await page.evaluate(
      async ({ url, agentId }) => {
        const w = window as unknown as PageWindow;
        const chat = new w.RelayChat({ url, agentId, token: () => w.mintToken(), persist: false });
        let last: { parts?: MessagePart[]; text: string } | undefined;
        const end = new Promise<MessageEnd>((resolve) => chat.on('message:end', resolve));
        chat.on('message:update', (m: { id: string; text: string; parts?: MessagePart[] }) => {
          last = m;
          const tool = m.parts?.find((p) => p.type === 'tool');
          if (tool?.type === 'tool' && tool.state === 'approval-requested' && tool.approval)
            void chat.approve(m.id, tool.approval.id, true);
        });
        await new Promise<void>((resolve) => chat.on('state', (s: { state: string }) => s.state === 'connected' && resolve()));
        await chat.send('parts');
        const ended = await end;
        const file = ended.parts?.find((p) => p.type === 'file');
        const img = document.createElement('img');
        const loaded = new Promise<{ width: number }>((resolve, reject) => {
          img.onload = () => resolve({ width: img.naturalWidth });
          img.onerror = () => reject(new Error('the image did not load'));
        });
        img.src = file?.type === 'file' ? file.url : '';
        document.body.append(img);
        return { ended, last, image: await loaded };
      },
      { url: hub.url, agentId: DEMO_AGENT_ID },
    );
    expect(result.ended.parts?.map((p) => p.type)).toEqual(DEMO_PARTS_TYPES);
    expect(result.ended.parts?.find((p) => p.type === 'tool')).toMatchObject({ state: 'output-available', approval: { approved: true } });
    // What the page built from the changes is the message the hub ended with.
    expect(result.last?.parts).toEqual(result.ended.parts);
    expect(result.last?.text).toBe(result.ended.text);
    expect(result.image.width).toBe(320);
  });
});
