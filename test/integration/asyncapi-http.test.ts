import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { configFrom } from '../../src/config/config';
import { ASYNCAPI_BUILD_FILE } from '../../src/http/asyncapi.docs';
import { startHub, type TestHub } from '../helpers/hub';
import { TEST_AGENT_KEY, TEST_JWT_SECRET } from '../helpers/tokens';

/**
 * docs/protocol.md ("The AsyncAPI document") over HTTP: the build-time AsyncAPI document served at /asyncapi.json with the server of
 * PUBLIC_URL, rendered at /asyncapi, written to ASYNCAPI_SPEC_FILE on start (a failed write is
 * logged, not fatal), linked from /api and the demo page, and off with API_DOCS_ENABLED=false.
 */
describe('AsyncAPI document over HTTP', () => {
  let h: TestHub;
  let dir: string;
  const built = () => JSON.parse(readFileSync(ASYNCAPI_BUILD_FILE, 'utf8')) as { servers: unknown };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'relay-asyncapi-'));
    h = await startHub({ PUBLIC_URL: 'https://chat.example.com/relay/', ASYNCAPI_SPEC_FILE: join(dir, 'asyncapi.json') });
  });
  afterAll(() => h?.close());

  const expectedServers = {
    hub: expect.objectContaining({ host: 'chat.example.com', protocol: 'wss', pathname: '/relay' }),
  };

  it('serves the build-time document at /asyncapi.json with the server of PUBLIC_URL', async () => {
    const res = await fetch(`${h.url}/asyncapi.json`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const doc = (await res.json()) as Record<string, unknown>;
    expect(doc.servers).toEqual(expectedServers);
    expect({ ...doc, servers: null }).toEqual({ ...built(), servers: null });
  });

  it('writes the same document to ASYNCAPI_SPEC_FILE on start', async () => {
    const served = await (await fetch(`${h.url}/asyncapi.json`)).json();
    expect(JSON.parse(readFileSync(join(dir, 'asyncapi.json'), 'utf8'))).toEqual(served);
  });

  it('renders the protocol for people at /asyncapi, without scripts or other origins', async () => {
    const res = await fetch(`${h.url}/asyncapi`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await res.text();
    expect(html).toContain('data-operation="clientReceiveMessage"');
    expect(html).toContain('id="code-TOKEN_EXPIRED"');
    expect(html).not.toMatch(/<script|https?:\/\/(?!chat\.example\.com)/);
    // Its links are relative to /asyncapi, so /asyncapi/ sends the browser there.
    const slash = await fetch(`${h.url}/asyncapi/`, { redirect: 'manual' });
    expect({ status: slash.status, location: slash.headers.get('location') }).toEqual({ status: 301, location: '../asyncapi' });
  });

  it('links the document from the OpenAPI description shown at /api', async () => {
    const spec = (await (await fetch(`${h.url}/api-json`)).json()) as { info: { description: string } };
    expect(spec.info.description).toContain('](../asyncapi)');
    expect(spec.info.description).toContain('](../asyncapi.json)');
  });

  it('derives the server from HOST and PORT without PUBLIC_URL', async () => {
    const plain = await startHub({ ASYNCAPI_SPEC_FILE: join(dir, 'plain.json') });
    try {
      const doc = (await (await fetch(`${plain.url}/asyncapi.json`)).json()) as {
        servers: Record<string, { host: string; protocol: string }>;
      };
      // startHub binds 127.0.0.1 with PORT 0 (the kernel picks the port the document cannot know).
      expect(doc.servers.hub).toMatchObject({ host: '127.0.0.1:0', protocol: 'ws' });
    } finally {
      await plain.close();
    }
  });

  it('starts and serves when the document cannot be written', async () => {
    const path = join(dir, 'missing-dir', 'asyncapi.json');
    const broken = await startHub({ ASYNCAPI_SPEC_FILE: path });
    try {
      expect(existsSync(path)).toBe(false);
      expect((await fetch(`${broken.url}/asyncapi.json`)).status).toBe(200);
      expect((await fetch(`${broken.url}/health/live`)).status).toBe(200);
    } finally {
      await broken.close();
    }
  });

  it('turns /asyncapi and /asyncapi.json off with API_DOCS_ENABLED=false, and the demo page stops linking them', async () => {
    const quiet = await startHub({ API_DOCS_ENABLED: 'false', DEMO_ENABLED: 'true', ASYNCAPI_SPEC_FILE: join(dir, 'quiet.json') });
    try {
      for (const path of ['/asyncapi', '/asyncapi.json']) {
        const res = await fetch(`${quiet.url}${path}`);
        expect({ path, status: res.status }).toEqual({ path, status: 404 });
      }
      expect(await (await fetch(`${quiet.url}/`)).text()).not.toContain('./asyncapi');
      // The file is for tooling, written whether or not the docs are served, like OPENAPI_SPEC_FILE.
      expect(existsSync(join(dir, 'quiet.json'))).toBe(true);
    } finally {
      await quiet.close();
    }
  });

  it('links /asyncapi from the demo page', async () => {
    const demo = await startHub({ DEMO_ENABLED: 'true', ASYNCAPI_SPEC_FILE: join(dir, 'demo.json') });
    try {
      expect(await (await fetch(`${demo.url}/`)).text()).toContain('<a href="./asyncapi">');
    } finally {
      await demo.close();
    }
  });

  it.each([
    ['ftp://chat.example.com', 'http:// or https://'],
    ['not a url', 'http:// or https://'],
    ['https://chat.example.com/?x=1', 'no query'],
    ['https://user:pw@chat.example.com', 'credentials'],
  ])('refuses PUBLIC_URL=%s naming the key', (value, why) => {
    const load = () => configFrom({ PUBLIC_URL: value, JWT_SECRET: TEST_JWT_SECRET, AGENT_API_KEYS: TEST_AGENT_KEY });
    expect(load).toThrow(/PUBLIC_URL/);
    expect(load).toThrow(why);
  });
});
