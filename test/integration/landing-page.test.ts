import { startHub, type TestHub } from '../helpers/hub';

/** What a person opening the hub's address in a browser gets (compose: http://localhost:8080). */
describe('the hub at / without the demo (production)', () => {
  let t: TestHub;
  afterEach(async () => {
    await t?.close();
  });

  const links = (html: string) => [...html.matchAll(/href="([^"]+)"/g)].map((m) => m[1]);

  it('shows a landing page linking the REST docs, the relay protocol page and the SDK, each of which answers 200', async () => {
    t = await startHub({ DEMO_ENABLED: 'false' });
    const root = await fetch(`${t.url}/`);
    expect(root.status).toBe(200);
    expect(root.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await root.text();
    expect(html).toMatch(/<title>relay-hub<\/title>/);
    const hrefs = links(html).filter((h) => h.startsWith('./'));
    expect(hrefs).toEqual(expect.arrayContaining(['./api/', './asyncapi', './sdk/embed.mjs', './health/ready']));
    for (const href of hrefs) expect({ href, status: (await fetch(new URL(href, `${t.url}/`))).status }).toEqual({ href, status: 200 });
  });

  it('links no docs when API_DOCS_ENABLED=false, and says so', async () => {
    t = await startHub({ DEMO_ENABLED: 'false', API_DOCS_ENABLED: 'false' });
    const html = await (await fetch(`${t.url}/`)).text();
    expect(links(html)).not.toContain('./api/');
    expect(links(html)).not.toContain('./asyncapi');
    expect(html).toMatch(/API_DOCS_ENABLED=false/);
    expect((await fetch(`${t.url}/api/`)).status).toBe(404);
  });

  it('answers a browser asking for /favicon.ico with 204 instead of a 404, and the pages name an icon of their own', async () => {
    t = await startHub({ DEMO_ENABLED: 'true' });
    const icon = await fetch(`${t.url}/favicon.ico`);
    expect(icon.status).toBe(204);
    for (const path of ['/', '/asyncapi']) {
      const html = await (await fetch(`${t.url}${path}`)).text();
      expect({ path, icon: /<link rel="icon" href="data:,">/.test(html) }).toEqual({ path, icon: true });
    }
  });

  it('still answers unknown paths with a problem+json 404', async () => {
    t = await startHub({ DEMO_ENABLED: 'false' });
    const res = await fetch(`${t.url}/no-such-page`);
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  });
});
