import { configSchema } from '../../src/config/config.schema';
import { ConfigError, loadConfig } from '../../src/config/config';

const SECRETS = { JWT_SECRET: 's'.repeat(32), AGENT_API_KEYS: 'k'.repeat(16) };

describe('loadConfig', () => {
  it('applies documented defaults', () => {
    const { config } = loadConfig({ ...SECRETS });
    expect(config).toMatchObject({
      PORT: 3000,
      HOST: '0.0.0.0',
      REDIS_URL: null,
      JWT_ALGORITHMS: ['HS256'],
      JWT_CLOCK_TOLERANCE_S: 5,
      JWT_REQUIRE_EXP: true,
      MINT_MAX_EXPIRES_IN: '30d',
      CORS_ORIGINS: ['*'],
      OPENAPI_SPEC_FILE: 'openapi.json',
      API_DOCS_ENABLED: true,
      MAX_MESSAGE_BYTES: 65536,
      AGENT_ACK_TIMEOUT_MS: 10000,
      DEDUPE_WINDOW_S: 600,
      SHUTDOWN_GRACE_MS: 20000,
    });
  });

  it('parses lists and types from strings and freezes the result', () => {
    const { config } = loadConfig({
      ...SECRETS,
      AGENT_API_KEYS: 'first-key-0123456789, second-key-0123456789',
      JWT_ALGORITHMS: 'HS256,HS512',
      CORS_ORIGINS: 'https://a.example,https://b.example',
      PORT: '8080',
      JWT_REQUIRE_EXP: 'false',
      TRUST_PROXY: '1',
    });
    expect(config.AGENT_API_KEYS).toEqual(['first-key-0123456789', 'second-key-0123456789']);
    expect(config.JWT_ALGORITHMS).toEqual(['HS256', 'HS512']);
    expect(config.CORS_ORIGINS).toEqual(['https://a.example', 'https://b.example']);
    expect(config.PORT).toBe(8080);
    expect(config.JWT_REQUIRE_EXP).toBe(false);
    expect(config.TRUST_PROXY).toBe(1);
    expect(Object.isFrozen(config) && Object.isFrozen(config.AGENT_API_KEYS)).toBe(true);
  });

  it.each([
    ['PORT', 'eighty'],
    ['PORT', '70000'],
    ['NODE_ENV', 'staging'],
    ['LOG_LEVEL', 'loud'],
    ['JWT_ALGORITHMS', 'none'],
    ['JWT_ALGORITHMS', 'RS256'],
    ['JWT_SECRET', 'short'],
    ['AGENT_API_KEYS', 'tiny'],
    ['REDIS_URL', 'http://localhost:6379'],
    ['MINT_MAX_EXPIRES_IN', '30 days'],
    ['MAX_MESSAGE_BYTES', '-1'],
    ['JWT_REQUIRE_EXP', 'maybe'],
  ])('fails fast naming %s for %j', (key, value) => {
    expect(() => loadConfig({ ...SECRETS, [key]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ ...SECRETS, [key]: value })).toThrow(key);
  });

  it('generates missing secrets outside production without Redis, and reports them', () => {
    const { config, generated } = loadConfig({});
    expect(generated.JWT_SECRET).toBe(config.JWT_SECRET);
    expect(config.AGENT_API_KEYS).toEqual([generated.AGENT_API_KEYS]);
    expect(config.JWT_SECRET.length).toBeGreaterThanOrEqual(32);
    expect(loadConfig({}).config.JWT_SECRET).not.toBe(config.JWT_SECRET);
  });

  it.each([
    [{ NODE_ENV: 'production' }, 'JWT_SECRET'],
    [{ NODE_ENV: 'production', JWT_SECRET: SECRETS.JWT_SECRET }, 'AGENT_API_KEYS'],
    [{ REDIS_URL: 'redis://127.0.0.1:1' }, 'JWT_SECRET'],
  ])('refuses to start without secrets in %j, naming %s', (env, key) => {
    expect(() => loadConfig(env)).toThrow(new RegExp(`${key} is required`));
  });

  it('locks production down: no CORS wildcard default, no demo', () => {
    const { config } = loadConfig({ ...SECRETS, NODE_ENV: 'production' });
    expect(config.CORS_ORIGINS).toEqual([]);
    expect(config.DEMO_ENABLED).toBe(false);
    expect(() => loadConfig({ ...SECRETS, NODE_ENV: 'production', DEMO_ENABLED: 'true' })).toThrow('DEMO_ENABLED');
  });

  it('treats an empty variable as unset', () => {
    expect(loadConfig({ ...SECRETS, REDIS_URL: '', PORT: '' }).config).toMatchObject({ REDIS_URL: null, PORT: 3000 });
  });

  it('documents every key, with an env var of the same name', () => {
    for (const [key, entry] of Object.entries(configSchema)) {
      expect(entry.env).toBe(key);
      expect(entry.doc.length).toBeGreaterThan(10);
    }
  });
});
