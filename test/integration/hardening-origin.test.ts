import { Namespaces } from '../../src/protocol';
import { clientSocket, refusal, startHub, type TestHub } from '../helpers/hub';
import { RawEngine } from '../helpers/raw-engine';
import { mintToken, TEST_AGENT_KEY } from '../helpers/tokens';

const GOOD = 'https://good.example';
const EVIL = 'https://evil.example';

// CORS is configured (Socket.IO's `cors` option gets CORS_ORIGINS), yet CORS only governs what a
// browser lets a page read over HTTP: a websocket upgrade is not subject to it, and a polling
// request from another origin still reaches the server. The allowlist must hold at the handshake.
let t: TestHub;
beforeAll(async () => {
  t = await startHub({ CORS_ORIGINS: `${GOOD},https://other-good.example`, HANDSHAKE_FAILURES_PER_MIN: '0' });
});
afterAll(() => t.close());

const auth = () => ({ token: mintToken({ sub: 'u' }), agentId: 'bot' });

describe('Origin allowlist on /ws/client', () => {
  it.each([['websocket'], ['polling']] as const)('refuses a foreign Origin over %s and accepts a listed one', async (transport) => {
    const bad = clientSocket(t.url, auth(), { origin: EVIL, transports: [transport] });
    expect(await refusal(bad)).toEqual({ code: 'ORIGIN_NOT_ALLOWED', retryable: false });
    (await t.client('bot', { sub: 'u' }, { origin: GOOD, transports: [transport] })).disconnect();
  });

  it('refuses the opaque Origin "null" (sandboxed frames, file: pages)', async () => {
    expect(await refusal(clientSocket(t.url, auth(), { origin: 'null' }))).toEqual({ code: 'ORIGIN_NOT_ALLOWED', retryable: false });
  });

  it('does not mistake a look-alike for a listed origin', async () => {
    for (const origin of [`${GOOD}.evil.example`, 'http://good.example', `${GOOD}:8443`]) {
      expect((await refusal(clientSocket(t.url, auth(), { origin }))).code).toBe('ORIGIN_NOT_ALLOWED');
    }
  });

  it('lets the websocket upgrade through (CORS does not apply) but refuses the namespace and closes the transport', async () => {
    const raw = new RawEngine(t.url, { headers: { origin: EVIL } });
    await raw.opened; // nothing stopped the upgrade itself
    const reply = await raw.join(Namespaces.client, auth());
    expect(reply.startsWith(`44${Namespaces.client},`)).toBe(true);
    expect(JSON.parse(reply.slice(`44${Namespaces.client},`.length)).data).toEqual({ code: 'ORIGIN_NOT_ALLOWED', retryable: false });
    expect(await raw.closed).toBeGreaterThan(0);
    expect(raw.frames.some((f) => f.startsWith('42'))).toBe(false); // no session, no event
  });

  it('gives a foreign polling request no CORS grant, so a page there cannot read the response either', async () => {
    const res = await fetch(`${t.url}/socket.io/?EIO=4&transport=polling`, { headers: { origin: EVIL } });
    await res.text();
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
    const ok = await fetch(`${t.url}/socket.io/?EIO=4&transport=polling`, { headers: { origin: GOOD } });
    await ok.text();
    expect(ok.headers.get('access-control-allow-origin')).toBe(GOOD);
  });

  it('accepts peers without an Origin (servers, native apps: not browsers, which always send one)', async () => {
    (await t.client('bot', { sub: 'u' })).disconnect();
  });

  it('does not apply the browser allowlist to agent runtimes', async () => {
    const raw = new RawEngine(t.url, { headers: { origin: EVIL } });
    const reply = await raw.join(Namespaces.agent, { apiKey: TEST_AGENT_KEY, agentId: 'bot' });
    expect(reply.startsWith(`40${Namespaces.agent},`)).toBe(true);
    raw.close();
  });
});
