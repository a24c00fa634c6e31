import { startHub, type TestHub } from '../helpers/hub';

/** How the demo page gets its script: a same-origin file bundled at build time, under a strict CSP. */
describe('the demo page at / and its script', () => {
  let t: TestHub;
  beforeAll(async () => {
    t = await startHub({ DEMO_ENABLED: 'true' });
  });
  afterAll(async () => {
    await t?.close();
  });

  const scripts = (html: string) => [...html.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)].map(([, attrs, body]) => ({ attrs, body }));

  it('loads its script as a module file, and runs no inline script', async () => {
    const html = await (await fetch(`${t.url}/`)).text();
    const found = scripts(html);
    expect(found.filter((s) => /\bsrc=/.test(s.attrs))).toEqual([{ attrs: ' type="module" src="./demo/demo.js"', body: '' }]);
    // The only element without src is the settings' JSON data block, which browsers never execute.
    expect(found.filter((s) => !/\bsrc=/.test(s.attrs)).map((s) => s.attrs)).toEqual([' id="demo-settings" type="application/json"']);
  });

  it('serves the bundled script, revalidated on each load, importing the widget file the hub serves', async () => {
    const script = await fetch(`${t.url}/demo/demo.js`);
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toMatch(/^(text|application)\/javascript/);
    expect(script.headers.get('cache-control')).toMatch(/max-age=0/);
    expect(script.headers.get('etag')).toBeTruthy();
    const code = await script.text();
    const imports = [...code.matchAll(/\bfrom\s*"([^"]+)"/g)].map((m) => m[1]);
    expect(imports).toEqual(['../sdk/widget.mjs']);
    expect((await fetch(new URL(imports[0], `${t.url}/demo/demo.js`))).status).toBe(200);
    // Minified, with a source map beside it.
    expect(code).toMatch(/\/\/# sourceMappingURL=demo\.js\.map\s*$/);
    expect(code.split('\n').length).toBeLessThan(5);
    const map = (await (await fetch(`${t.url}/demo/demo.js.map`)).json()) as { sources: string[] };
    expect(map.sources).toEqual(expect.arrayContaining([expect.stringMatching(/demo\/client\/demo\.client\.ts$/)]));
  });

  it('serves none of the compiled server files beside it', async () => {
    for (const path of ['/demo/demo.routes.js', '/demo/demo.page.js', '/demo/', '/demo/client/demo.js']) {
      expect({ path, status: (await fetch(`${t.url}${path}`)).status }).toEqual({ path, status: 404 });
    }
  });

  it('sends a Content-Security-Policy that runs same-origin script files only and connects to the hub only', async () => {
    const res = await fetch(`${t.url}/`);
    const policy = Object.fromEntries(
      (res.headers.get('content-security-policy') ?? '')
        .split(';')
        .map((d) => d.trim().split(/\s+/))
        .filter(([name]) => name)
        .map(([name, ...values]) => [name, values]),
    );
    expect(policy).toMatchObject({
      'default-src': ["'self'"],
      'script-src': ["'self'"],
      'connect-src': ["'self'"],
      'object-src': ["'none'"],
      'base-uri': ["'none'"],
    });
  });
});
