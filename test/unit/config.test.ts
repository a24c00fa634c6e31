import { configSchema } from '../../src/config/config.schema';
import { ConfigError, loadConfig, redisTopologyOf } from '../../src/config/config';

const SECRETS = { JWT_SECRET: 's'.repeat(32), AGENT_API_KEYS: 'k'.repeat(16) };
/** What a production hub needs beside SECRETS. */
const PRODUCTION = { NODE_ENV: 'production', ADMIN_JWT_SECRET: 'a'.repeat(32) };

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
      MINT_MAX_EXPIRES_IN: '24h',
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
    // A former secret still verifies tokens: as weak as its weakest entry (issue 10).
    ['JWT_PREVIOUS_SECRETS', `${'p'.repeat(32)},${'q'.repeat(20)}`],
    ['ADMIN_JWT_SECRET', 'short'],
    ['ADMIN_JWT_SECRET', SECRETS.JWT_SECRET],
    ['AGENT_SHARED_KEYS_ENABLED', 'nope'],
    ['MEMORY_HIGH_WATER_RATIO', '1.5'],
    ['MEMORY_HIGH_WATER_RATIO', 'high'],
    ['MEMORY_LOW_WATER_RATIO', '-0.1'],
    ['MEMORY_LIMIT_BYTES', '512Mi'],
    // Hysteresis needs the low mark below the high one.
    ['MEMORY_LOW_WATER_RATIO', '0.9'],
  ])('fails fast naming %s for %j', (key, value) => {
    expect(() => loadConfig({ ...SECRETS, [key]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ ...SECRETS, [key]: value })).toThrow(key);
  });

  // A unit suffix or a fraction is refused, never read as its leading digits ("64Ki" as 64 bytes,
  // "30s" as 30 ms): convict's own `nat` and `port` parse with parseInt.
  const wholeNumberKeys = Object.entries(configSchema)
    .filter(([, entry]) => ['whole-number', 'positive-int', 'byte-count', 'tcp-port'].includes(String(entry.format)))
    .map(([key]) => key);
  it.each(wholeNumberKeys.flatMap((key) => ['64Ki', '1.5', '30s', '1e3', ' 8'].map((value) => [key, value])))(
    'refuses %s=%j with an error naming it',
    (key, value) => {
      expect(() => loadConfig({ ...SECRETS, [key]: value })).toThrow(ConfigError);
      expect(() => loadConfig({ ...SECRETS, [key]: value })).toThrow(key);
    },
  );

  it('has no setting left on a format that reads a number by its leading digits', () => {
    expect(Object.entries(configSchema).filter(([, entry]) => ['nat', 'int', 'port'].includes(String(entry.format)))).toEqual([]);
    expect(wholeNumberKeys.length).toBeGreaterThan(40);
  });

  it('reads the memory marks as ratios; with the high mark off (0) any low mark goes', () => {
    const { config } = loadConfig({
      ...SECRETS,
      MEMORY_HIGH_WATER_RATIO: '0.9',
      MEMORY_LOW_WATER_RATIO: '.8',
      MEMORY_LIMIT_BYTES: '1048576',
    });
    expect([config.MEMORY_HIGH_WATER_RATIO, config.MEMORY_LOW_WATER_RATIO, config.MEMORY_LIMIT_BYTES]).toEqual([0.9, 0.8, 1048576]);
    expect(loadConfig({ ...SECRETS, MEMORY_HIGH_WATER_RATIO: '0' }).config.MEMORY_HIGH_WATER_RATIO).toBe(0);
    expect(loadConfig(SECRETS).config).toMatchObject({
      MEMORY_HIGH_WATER_RATIO: 0.85,
      MEMORY_LOW_WATER_RATIO: 0.75,
      MEMORY_LIMIT_BYTES: 0,
    });
  });

  it('generates missing secrets outside production without Redis, and reports them', () => {
    const { config, generated } = loadConfig({});
    expect(generated.JWT_SECRET).toBe(config.JWT_SECRET);
    expect(config.AGENT_API_KEYS).toEqual([generated.AGENT_API_KEYS]);
    expect(config.JWT_SECRET.length).toBeGreaterThanOrEqual(32);
    expect(loadConfig({}).config.JWT_SECRET).not.toBe(config.JWT_SECRET);
    expect(config.ADMIN_JWT_SECRET).toBe(generated.ADMIN_JWT_SECRET);
    expect(config.ADMIN_JWT_SECRET).not.toBe(config.JWT_SECRET);
  });

  it('refuses an ADMIN_JWT_SECRET that is also a former chat secret', () => {
    const previous = 'p'.repeat(32);
    expect(() => loadConfig({ ...SECRETS, JWT_PREVIOUS_SECRETS: previous, ADMIN_JWT_SECRET: previous })).toThrow('ADMIN_JWT_SECRET');
  });

  it('needs no AGENT_API_KEYS in production without shared keys', () => {
    const { config } = loadConfig({ JWT_SECRET: SECRETS.JWT_SECRET, ...PRODUCTION, AGENT_SHARED_KEYS_ENABLED: 'false' });
    expect(config.ADMIN_JWT_SECRET).toBe(PRODUCTION.ADMIN_JWT_SECRET);
    expect(config.AGENT_API_KEYS).toEqual([]);
  });

  it('leaves ADMIN_JWT_SECRET unset (ADMIN REST off) outside production with Redis', () => {
    const { config } = loadConfig({ ...SECRETS, REDIS_URL: 'redis://127.0.0.1:1' });
    expect(config.ADMIN_JWT_SECRET).toBeNull();
  });

  it.each([
    [{ NODE_ENV: 'production' }, 'JWT_SECRET'],
    [{ NODE_ENV: 'production', JWT_SECRET: SECRETS.JWT_SECRET }, 'AGENT_API_KEYS'],
    [{ NODE_ENV: 'production', ...SECRETS }, 'ADMIN_JWT_SECRET'],
    [{ REDIS_URL: 'redis://127.0.0.1:1' }, 'JWT_SECRET'],
  ])('refuses to start without secrets in %j, naming %s', (env, key) => {
    expect(() => loadConfig(env)).toThrow(new RegExp(`${key} is required`));
  });

  it('locks production down: no CORS wildcard default, no demo', () => {
    const { config } = loadConfig({ ...SECRETS, ...PRODUCTION });
    expect(config.CORS_ORIGINS).toEqual([]);
    expect(config.DEMO_ENABLED).toBe(false);
    expect(() => loadConfig({ ...SECRETS, ...PRODUCTION, DEMO_ENABLED: 'true' })).toThrow('DEMO_ENABLED');
  });

  describe('Redis topology (docs/deployment.md)', () => {
    it.each([
      [{ REDIS_URL: 'redis://a:6379', REDIS_CLUSTER_NODES: 'a:7000' }, /REDIS_URL and REDIS_CLUSTER_NODES are both set/],
      [{ REDIS_URL: 'redis://a:6379', REDIS_SENTINELS: 'a:26379', REDIS_SENTINEL_NAME: 'm' }, /REDIS_URL and REDIS_SENTINELS/],
      [{ REDIS_SENTINELS: 'a:26379', REDIS_CLUSTER_NODES: 'a:7000', REDIS_SENTINEL_NAME: 'm' }, /REDIS_SENTINELS and REDIS_CLUSTER_NODES/],
      [{ REDIS_SENTINELS: 'a:26379' }, /REDIS_SENTINELS needs REDIS_SENTINEL_NAME/],
      [{ REDIS_SENTINEL_NAME: 'm' }, /REDIS_SENTINEL_NAME needs REDIS_SENTINELS/],
      [{ REDIS_CLUSTER_NODES: 'a:7000,b' }, /REDIS_CLUSTER_NODES.*"b" is not host:port/],
      [{ REDIS_CLUSTER_NODES: 'a:70000' }, /REDIS_CLUSTER_NODES.*"a:70000"/],
      [{ REDIS_SENTINELS: 'redis://a:26379', REDIS_SENTINEL_NAME: 'm' }, /REDIS_SENTINELS/],
      [{ REDIS_URL: 'redis://a:6379', REDIS_PASSWORD: 'pw' }, /REDIS_PASSWORD apply to REDIS_SENTINELS or REDIS_CLUSTER_NODES/],
    ])('refuses %j, naming the keys', (env, message) => {
      expect(() => loadConfig({ ...SECRETS, ...env })).toThrow(ConfigError);
      expect(() => loadConfig({ ...SECRETS, ...env })).toThrow(message);
    });

    it('derives each topology, with credentials for Sentinel and Cluster', () => {
      const topology = (env: Record<string, string>) => redisTopologyOf(loadConfig({ ...SECRETS, ...env }).config);
      expect(topology({})).toBeNull();
      expect(topology({ REDIS_URL: 'rediss://relay:pw@r.example:6380' })).toEqual({
        kind: 'single',
        url: 'rediss://relay:pw@r.example:6380',
      });
      expect(
        topology({ REDIS_SENTINELS: 's1:26379, [::1]:26380', REDIS_SENTINEL_NAME: 'mymaster', REDIS_PASSWORD: 'pw', REDIS_TLS: 'true' }),
      ).toEqual({
        kind: 'sentinel',
        sentinels: [
          { host: 's1', port: 26379 },
          { host: '::1', port: 26380 },
        ],
        name: 'mymaster',
        auth: { password: 'pw', tls: true },
      });
      expect(topology({ REDIS_CLUSTER_NODES: 'n1:7000,n2:7001', REDIS_USERNAME: 'relay' })).toEqual({
        kind: 'cluster',
        nodes: [
          { host: 'n1', port: 7000 },
          { host: 'n2', port: 7001 },
        ],
        auth: { username: 'relay', tls: false },
      });
    });

    it.each([{ REDIS_SENTINELS: 'a:26379', REDIS_SENTINEL_NAME: 'm' }, { REDIS_CLUSTER_NODES: 'a:7000' }])(
      'requires shared secrets with %j as with REDIS_URL',
      (env) => {
        expect(() => loadConfig(env)).toThrow(/JWT_SECRET is required when Redis is configured/);
      },
    );
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
