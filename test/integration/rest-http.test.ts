import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { JwtService } from '../../src/auth/jwt.service';
import { configFrom, type ConfigKey } from '../../src/config/config';
import { createHttpApp, type ReadinessProbe } from '../../src/http/app';
import { openApiSpec } from '../../src/http/docs';
import { clientIpResolver } from '../../src/net/client-ip';
import { createLogger } from '../../src/logging/logger';
import { ThrottledLog } from '../../src/logging/throttled-log';
import { HubMetrics } from '../../src/metrics/metrics';
import { AuthFailureLimiter } from '../../src/limits/auth-failure-limiter';
import type { RelayService } from '../../src/relay/relay.service';
import { MemoryStore } from '../../src/store/memory/memory.store';
import { startHub, type TestHub } from '../helpers/hub';
import { TEST_ADMIN_JWT_SECRET, TEST_AGENT_KEY, TEST_JWT_SECRET } from '../helpers/tokens';
import { adminToken, anonymousClient, api, bearerClient } from './rest-client.helper';

/** The HTTP app alone (no Socket.IO), for what a whole hub does not expose: the spec write, readiness. */
async function startApp(
  overrides: Partial<Record<ConfigKey, string>>,
  readiness: ReadinessProbe = async () => ({ ready: true, checks: {} }),
) {
  const config = configFrom({
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    JWT_SECRET: TEST_JWT_SECRET,
    ADMIN_JWT_SECRET: TEST_ADMIN_JWT_SECRET,
    AGENT_API_KEYS: TEST_AGENT_KEY,
    ...overrides,
  });
  const store = new MemoryStore();
  const metrics = new HubMetrics();
  const logger = createLogger('silent');
  const authFailures = new AuthFailureLimiter(store.limiters, config.HANDSHAKE_FAILURES_PER_MIN, new ThrottledLog(logger), metrics);
  const app = createHttpApp({
    config,
    logger,
    metrics,
    readiness,
    store,
    jwt: new JwtService(config),
    // Nothing here acts on live sockets; any use of the relay fails the test.
    relay: new Proxy({} as RelayService, {
      get() {
        throw new Error('no relay in this test');
      },
    }),
    authFailures,
    clientIp: clientIpResolver(config.TRUST_PROXY),
  });
  const server: Server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const close = async () => {
    await new Promise((resolve) => server.close(resolve));
    await store.close();
  };
  return { app, url, close };
}

describe('REST transport: body limits, media types, docs, spec file, health', () => {
  let h: TestHub;
  let specDir: string;
  beforeEach(async () => {
    specDir = mkdtempSync(join(tmpdir(), 'relay-spec-'));
    h = await startHub({ REST_BODY_LIMIT_BYTES: '1024', OPENAPI_SPEC_FILE: join(specDir, 'openapi.json') });
  });
  afterEach(() => h.close());

  it('answers 413 problem+json for a body over REST_BODY_LIMIT_BYTES', async () => {
    const res = await api.createUser({
      client: bearerClient(h.url, adminToken()),
      body: { email: 'a@example.com', name: 'x'.repeat(2000) },
    });
    expect(res.response!.status).toBe(413);
    expect(res.response!.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(res.error).toMatchObject({ status: 413, code: 'PAYLOAD_TOO_LARGE', title: 'Payload Too Large' });
  });

  it('answers 415 for a body that is not JSON, 400 for malformed JSON', async () => {
    const client = bearerClient(h.url, adminToken());
    const text = await api.createUser({ client, body: { email: 'a@example.com', name: 'A' }, headers: { 'Content-Type': 'text/plain' } });
    expect(text.response!.status).toBe(415);
    expect(text.error).toMatchObject({ status: 415, code: 'UNSUPPORTED_MEDIA_TYPE' });
    const form = await api.createApiKey({
      client,
      body: { name: 'k', scopes: ['embed:mint'], agentIds: ['*'] },
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    });
    expect(form.response!.status).toBe(415);
    const malformed = await api.createUser({
      client,
      body: '{"email":' as unknown as api.CreateUserDto,
      bodySerializer: (b: unknown) => b as string,
    });
    expect(malformed.response!.status).toBe(400);
    expect(malformed.error).toMatchObject({ code: 'VALIDATION_FAILED', errors: [{ path: 'body', message: 'malformed JSON' }] });
    expect((await api.getUsers({ client })).data!.meta.total).toBe(0);
  });

  it('accepts body-less POSTs (activate, mint) without a Content-Type', async () => {
    const res = await api.activateUser({ client: bearerClient(h.url, adminToken()), path: { id: 'u1' } });
    expect(res.response!.status).toBe(200);
  });

  it('serves the generated spec at /api-json and Swagger UI at /api; /metrics stays out of the spec', async () => {
    const json = await fetch(`${h.url}/api-json`);
    expect(json.status).toBe(200);
    const spec = (await json.json()) as { info: { version: string }; paths: Record<string, unknown> };
    expect(spec).toEqual(JSON.parse(JSON.stringify(openApiSpec)));
    expect(spec.info.version).toBe('1.0');
    expect(spec.paths['/metrics']).toBeUndefined();
    const page = await fetch(`${h.url}/api/`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('swagger-ui');
    const init = await fetch(`${h.url}/api/swagger-ui-init.js`);
    expect(await init.text()).toContain('"persistAuthorization": true');
    expect((await fetch(`${h.url}/metrics`)).status).toBe(200);
  });

  it('writes the spec to OPENAPI_SPEC_FILE on start', async () => {
    // startHub listened, and listen() resolves after the start-up write.
    expect(JSON.parse(readFileSync(join(specDir, 'openapi.json'), 'utf8'))).toEqual(JSON.parse(JSON.stringify(openApiSpec)));
  });

  it('starts and serves when the spec file cannot be written', async () => {
    const path = join(specDir, 'missing-dir', 'openapi.json');
    const broken = await startHub({ OPENAPI_SPEC_FILE: path });
    try {
      expect(existsSync(path)).toBe(false);
      expect((await api.getLiveness({ client: anonymousClient(broken.url) })).response!.status).toBe(200);
    } finally {
      await broken.close();
    }
  });

  it('turns /api and /api-json off with API_DOCS_ENABLED=false', async () => {
    const quiet = await startHub({ API_DOCS_ENABLED: 'false' });
    try {
      for (const path of ['/api/', '/api-json']) {
        const res = await fetch(`${quiet.url}${path}`);
        expect({ path, status: res.status }).toEqual({ path, status: 404 });
      }
      expect((await api.me({ client: bearerClient(quiet.url, adminToken()) })).response!.status).toBe(200);
    } finally {
      await quiet.close();
    }
  });

  it('answers the health probes without authentication', async () => {
    const client = anonymousClient(h.url);
    const live = await api.getLiveness({ client });
    expect({ status: live.response!.status, body: live.data }).toEqual({ status: 200, body: { status: 'ok' } });
    const ready = await api.getReadiness({ client });
    expect({ status: ready.response!.status, body: ready.data }).toEqual({
      status: 200,
      body: { status: 'ok', checks: { notDraining: true, memoryBelowHighWater: true } },
    });
  });

  it('answers 503 with the failing check when the replica is not ready', async () => {
    const unready = await startApp({}, async () => ({ ready: false, checks: { notDraining: false, redis: true } }));
    try {
      const ready = await api.getReadiness({ client: anonymousClient(unready.url) });
      expect({ status: ready.response!.status, body: ready.error }).toEqual({
        status: 503,
        body: { status: 'unavailable', checks: { notDraining: false, redis: true } },
      });
    } finally {
      await unready.close();
    }
  });

  it('answers CORS preflights for CORS_ORIGINS and leaves other origins without CORS headers', async () => {
    const strict = await startHub({ CORS_ORIGINS: 'https://app.example' });
    try {
      const preflight = (origin: string) =>
        fetch(`${strict.url}/auth/embed/token`, {
          method: 'OPTIONS',
          headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'api-key,content-type' },
        });
      const allowed = await preflight('https://app.example');
      expect(allowed.status).toBe(204);
      expect(allowed.headers.get('access-control-allow-origin')).toBe('https://app.example');
      expect(allowed.headers.get('access-control-allow-headers')).toContain('api-key');
      const other = await preflight('https://evil.example');
      expect(other.headers.get('access-control-allow-origin')).toBeNull();
      const me = await api.me({ client: bearerClient(strict.url, adminToken()), headers: { origin: 'https://app.example' } });
      expect(me.response!.headers.get('access-control-allow-origin')).toBe('https://app.example');
    } finally {
      await strict.close();
    }
  });

  it('answers 404 problem+json for unknown routes', async () => {
    const res = await fetch(`${h.url}/nope`);
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(await res.json()).toMatchObject({ status: 404, code: 'NOT_FOUND' });
  });
});
