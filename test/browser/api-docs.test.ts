import type { Browser, Page } from 'playwright-core';
import { startHub, type TestHub } from '../helpers/hub';
import { mintToken } from '../helpers/tokens';
import { launchChromium } from './chromium';

/**
 * The interactive docs in real Chromium: authorize with a bearer token, reload, still authorized
 * (persistAuthorization), then "Try it out" → Execute on `me` answers 200.
 */
describe('API docs at /api (Chromium)', () => {
  let h: TestHub;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    h = await startHub();
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await h?.close();
  });
  beforeEach(async () => {
    page = await browser.newPage();
  });
  afterEach(() => page.close());

  /** The Authorize dialog's section for the bearer scheme. */
  const bearerSection = (p: Page) => p.locator('.auth-container').filter({ hasText: 'defaultBearerAuth' });

  it('keeps the bearer authorization across a reload and calls `me` with it', async () => {
    const token = mintToken({ sub: 'docs-user', roles: ['ADMIN'] });
    await page.goto(`${h.url}/api/`);
    await page.locator('.swagger-ui .info .title').filter({ hasText: 'relay-hub REST API' }).waitFor();

    await page.locator('.scheme-container button.authorize').click();
    await bearerSection(page).locator('input').fill(token);
    await bearerSection(page).locator('button.authorize').click();
    await bearerSection(page).locator('button', { hasText: 'Logout' }).waitFor();
    await page.locator('.modal-ux button.close-modal').click();

    await page.reload();
    await page.locator('.swagger-ui .info .title').waitFor();
    await page.locator('.scheme-container button.authorize.locked').waitFor();
    const stored = await page.evaluate(() => window.localStorage.getItem('authorized'));
    expect(JSON.parse(stored ?? '{}')).toMatchObject({ defaultBearerAuth: { value: token } });

    const me = page.locator('#operations-Auth-me');
    await me.locator('.opblock-summary').click();
    await me.locator('button.try-out__btn').click();
    await me.locator('button.execute').click();
    const status = me.locator('.live-responses-table .response .response-col_status');
    await status.waitFor();
    expect((await status.textContent())?.trim()).toBe('200');
    const body = await me.locator('.live-responses-table .response-col_description pre').first().textContent();
    expect(JSON.parse(body ?? '{}')).toMatchObject({ success: true, data: { clientId: 'admin', sub: 'docs-user' } });
    expect(await me.locator('.curl-command').textContent()).toContain(`Authorization: Bearer ${token}`);
  }, 60_000);
});
