import { mkdir, readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Page } from 'playwright-core';
import { startHub, type TestHub } from '../helpers/hub';
import { ARTIFACTS, chromiumForFile, PNG_SIGNATURE } from './chromium';

/**
 * The relay protocol page in real Chromium: `/asyncapi` renders both namespaces, the client's
 * `message` operation with its payload and ack, and the codes with retryable; `/api` links to it.
 * Nothing is loaded from another origin.
 */
describe('relay protocol page at /asyncapi (Chromium)', () => {
  let h: TestHub;
  const browser = chromiumForFile();
  let page: Page;
  const foreign: string[] = [];

  beforeAll(async () => {
    h = await startHub();
  });
  afterAll(async () => {
    await h?.close();
  });
  beforeEach(async () => {
    page = await browser().newPage();
    page.on('request', (req) => {
      if (!req.url().startsWith(h.url)) foreign.push(req.url());
    });
  });
  afterEach(() => page.close());

  it("renders the namespaces and the client namespace's message operation with its payload and ack", async () => {
    await page.goto(`${h.url}/asyncapi`);
    await page.locator('h1', { hasText: 'relay-hub relay protocol' }).waitFor();
    expect(await page.locator('section[data-channel]').evaluateAll((els) => els.map((e) => e.getAttribute('data-channel')))).toEqual([
      '/ws/client',
      '/ws/agent',
      '/ws/operator',
    ]);

    const op = page.locator('section[data-channel="/ws/client"] article[data-operation="clientReceiveMessage"]');
    await op.waitFor();
    expect(await op.getAttribute('data-event')).toBe('message');
    expect(await op.locator('.dir').textContent()).toBe('C→H');
    const payloadFields = await op.locator('table').first().locator('td:first-child code').allTextContents();
    expect(payloadFields).toEqual(['clientMessageId', 'text', 'data', 'parts']);
    await expect(op.locator('.label', { hasText: 'Ack / reply' }).textContent()).resolves.toContain('SendAck');

    const expired = page.locator('#catalogue-HandshakeCode tr[data-code="TOKEN_EXPIRED"]');
    expect(await expired.locator('td').nth(1).textContent()).toBe('retryable');
    const invalid = page.locator('#catalogue-HandshakeCode tr[data-code="TOKEN_INVALID"]');
    expect(await invalid.locator('td').nth(1).textContent()).toBe('no');

    await page.setViewportSize({ width: 1100, height: 900 });
    await op.evaluate((el) => el.scrollIntoView());
    await mkdir(ARTIFACTS, { recursive: true });
    const screenshot = resolve(ARTIFACTS, 'asyncapi-page.png');
    await page.screenshot({ path: screenshot });
    const png = await readFile(screenshot);
    expect(png.subarray(0, PNG_SIGNATURE.length).equals(PNG_SIGNATURE)).toBe(true);
    expect(foreign).toEqual([]);
  }, 60_000);

  it('is one click away from the REST docs at /api', async () => {
    await page.goto(`${h.url}/api/`);
    const link = page.locator('.swagger-ui .info a', { hasText: 'relay protocol' });
    await link.waitFor();
    // Swagger UI opens description links in a new tab.
    const [docs] = await Promise.all([page.context().waitForEvent('page'), link.click()]);
    await docs.waitForURL(`${h.url}/asyncapi`);
    await docs.locator('article[data-operation="clientReceiveMessage"]').waitFor();
    await docs.close();
  }, 60_000);
});
