import type { Page } from 'playwright-core';
import { startHub, type TestHub } from '../helpers/hub';
import { mintToken } from '../helpers/tokens';
import { chromiumForFile } from './chromium';

/**
 * The interactive docs in real Chromium: authorize with a bearer token, reload, still authorized
 * (persistAuthorization), then "Try it out" → Execute on `me` answers 200.
 */
describe('API docs at /api (Chromium)', () => {
  let h: TestHub;
  const browser = chromiumForFile();
  let page: Page;

  beforeAll(async () => {
    h = await startHub();
  });
  afterAll(async () => {
    await h?.close();
  });
  beforeEach(async () => {
    page = await browser().newPage();
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

  it('shows under each error status an example of that status, not the 400 VALIDATION_FAILED body', async () => {
    await page.goto(`${h.url}/api/`);
    const op = page.locator('#operations-Users-getUsers');
    await op.locator('.opblock-summary').click();
    const example = async (status: number) => {
      const row = op.locator(`tr.response[data-code="${status}"]`);
      await row.locator('.example, .microlight').first().waitFor();
      return (await row.locator('.example, .microlight').first().textContent()) ?? '';
    };
    const shown = { 401: await example(401), 403: await example(403), 429: await example(429) };
    expect(shown[401]).toMatch(/"status": 401[\s\S]*"code": "(AUTHORIZATION_MALFORMED|TOKEN_\w+|SUB_\w+)"/);
    expect(shown[403]).toMatch(/"status": 403[\s\S]*"code": "ROLE_REQUIRED"/);
    expect(shown[429]).toMatch(/"status": 429[\s\S]*"code": "RATE_LIMITED"/);
    for (const text of Object.values(shown)) expect(text).not.toContain('VALIDATION_FAILED');
  }, 60_000);
});
