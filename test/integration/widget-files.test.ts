import { startHub, type TestHub } from '../helpers/hub';

describe('the hub serves the widget (docs/widget.md)', () => {
  let hub: TestHub;
  beforeAll(async () => {
    hub = await startHub();
  });
  afterAll(async () => {
    await hub?.close();
  });

  it.each(['widget.js', 'widget.mjs', 'widget-highlight.mjs'])('/sdk/%s: JavaScript, loadable from any site', async (name) => {
    const res = await fetch(`${hub.url}/sdk/${name}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^(text|application)\/javascript/);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('cross-origin-resource-policy')).toBe('cross-origin');
    expect((await res.text()).length).toBeGreaterThan(1000);
  });

  it.each(['widget-nope.js', 'sub/dir/missing.mjs'])(
    '/sdk/%s: a file it does not have is 404 NOT_FOUND, not a bad request',
    async (name) => {
      const res = await fetch(`${hub.url}/sdk/${name}`);
      expect(res.status).toBe(404);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(await res.json()).toMatchObject({ status: 404, code: 'NOT_FOUND', detail: `No file at /sdk/${name}` });
      // The files it has are still served.
      expect((await fetch(`${hub.url}/sdk/widget.js`)).status).toBe(200);
    },
  );
});
