// helm/relay-hub's values under real Helm: every constraint of values.schema.json refuses a value that
// breaks it, naming the key, in `helm template` and `helm lint --strict`; the chart's own `required`
// and `fail` checks name the key to set; every value of values.yaml changes what Helm renders; every
// `.Values` path a template reads is declared; the schema describes every key.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Ajv from 'ajv';
import { badValues, batches, schema } from './support/bad-values';
import {
  CHART,
  COMBINATIONS,
  defaultValues,
  eachLimited,
  EVERYTHING_ON,
  lint,
  mergeValues,
  SECRETS,
  template,
  type Values,
} from './support/chart';

const defaults = defaultValues();
const cases = badValues(defaults);
const ajv = new Ajv({ allErrors: true, strict: false, allowUnionTypes: true });
const validate = ajv.compile(schema);

describe('values.schema.json under helm', () => {
  test(`every constraint refuses a value that breaks it, naming the key (${cases.length} cases, helm template)`, async () => {
    expect(cases.length).toBeGreaterThan(100);
    // The case really breaks the schema (Ajv agrees), so a render that succeeds is Helm not checking.
    const acceptedByAjv = cases.filter((c) => validate(mergeValues(mergeValues(defaults, EVERYTHING_ON), c.values)));
    expect(acceptedByAjv.map((c) => c.what)).toEqual([]);
    const failures = await eachLimited(batches(cases), 2, async (batch) => {
      const result = await template([EVERYTHING_ON, ...batch.map((c) => c.values)]);
      if (result.code === 0) return batch.map((c) => `${c.what}: helm template accepted it`);
      if (result.stdout !== '') return [`${batch.map((c) => c.what).join(', ')}: refused, but rendered output anyway`];
      return batch.flatMap((c) => {
        const missing = c.names.filter((n) => !result.stderr.includes(n));
        return missing.length > 0 ? [`${c.what}: the message does not name ${missing.join(', ')}:\n${result.stderr}`] : [];
      });
    });
    expect(failures.flat()).toEqual([]);
  });

  test('helm lint --strict refuses a value of each kind of constraint, naming the key', async () => {
    // One case per kind (wrong type, minimum, pattern, enum, unknown key, missing key…).
    const kinds = new Map<string, (typeof cases)[number]>();
    for (const c of cases) {
      const kind = c.what.replace(/^[^:]*: /, '').replace(/\s.*$/, '');
      if (!kinds.has(kind)) kinds.set(kind, c);
    }
    expect(kinds.size).toBeGreaterThanOrEqual(10);
    const failures = await eachLimited([...kinds.values()], 3, async (c) => {
      const result = await lint([EVERYTHING_ON, c.values]);
      const output = result.stdout + result.stderr;
      if (result.code === 0) return `${c.what}: lint passed`;
      const missing = c.names.filter((n) => !output.includes(n));
      return missing.length > 0 ? `${c.what}: lint does not name ${missing.join(', ')}:\n${output}` : null;
    });
    expect(failures.filter(Boolean)).toEqual([]);
  });

  test('shows what a refusal reads like', async () => {
    const result = await template([EVERYTHING_ON, { replicaCount: 0, secrets: { jwtSecret: 'too-short' } }]);
    expect(result.code).not.toBe(0);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain("at '/replicaCount': minimum: got 0, want 1");
    expect(result.stderr).toContain("at '/secrets/jwtSecret'");
  });
});

describe("the chart's own checks", () => {
  const { jwtSecret, adminJwtSecret, agentApiKeys, redisPassword } = SECRETS;
  test.each<[string, string, Values]>([
    ['no secrets at all', 'secrets.jwtSecret', {}],
    ['no agent API keys', 'secrets.agentApiKeys', { secrets: { jwtSecret, adminJwtSecret, redisPassword } }],
    ['no admin JWT secret', 'secrets.adminJwtSecret', { secrets: { jwtSecret, agentApiKeys, redisPassword } }],
    ['the in-chart Redis without a password', 'secrets.redisPassword', { secrets: { jwtSecret, adminJwtSecret, agentApiKeys } }],
    [
      'the Ingress without METRICS_TOKEN',
      'secrets.metricsToken',
      { ingress: { enabled: true }, secrets: { jwtSecret, adminJwtSecret, agentApiKeys, redisPassword } },
    ],
    ['an external Redis without its URL', 'redis.url', { redis: { enabled: false }, secrets: { jwtSecret, adminJwtSecret, agentApiKeys } }],
    [
      'Sentinels without the master name',
      'redis.sentinelName',
      { redis: { enabled: false, sentinels: 's-0:26379' }, secrets: { jwtSecret, adminJwtSecret, agentApiKeys } },
    ],
    [
      'Sentinels beside the in-chart Redis',
      'redis.enabled=false',
      { redis: { sentinels: 's-0:26379', sentinelName: 'm' }, secrets: { jwtSecret, adminJwtSecret, agentApiKeys, redisPassword } },
    ],
    ['PORT in config', 'config.PORT', { config: { PORT: '8080' }, secrets: { jwtSecret, adminJwtSecret, agentApiKeys, redisPassword } }],
    [
      'METRICS_TOKEN in config',
      'config.METRICS_TOKEN',
      { config: { METRICS_TOKEN: SECRETS.metricsToken }, secrets: { jwtSecret, adminJwtSecret, agentApiKeys, redisPassword } },
    ],
    [
      'ADMIN_JWT_SECRET in config',
      'config.ADMIN_JWT_SECRET',
      { config: { ADMIN_JWT_SECRET: SECRETS.adminJwtSecret }, secrets: { jwtSecret, adminJwtSecret, agentApiKeys, redisPassword } },
    ],
  ])('refuses %s, naming %s', async (_what, key, values) => {
    const result = await template(values);
    expect({ code: result.code === 0 ? 0 : 'non-zero', stdout: result.stdout }).toEqual({ code: 'non-zero', stdout: '' });
    expect(result.stderr).toContain(key);
  });
});

/** Leaves of values.yaml: scalars, lists, and empty maps (maps with keys are walked into). */
function leaves(node: unknown, path: string[] = []): string[][] {
  if (node && typeof node === 'object' && !Array.isArray(node) && Object.keys(node).length > 0) {
    return Object.entries(node).flatMap(([k, v]) => leaves(v, [...path, k]));
  }
  return [path];
}

function at(values: unknown, path: string[]): unknown {
  return path.reduce<unknown>((node, key) => (node && typeof node === 'object' ? (node as Values)[key] : undefined), values);
}

function schemaAt(path: string[]): { enum?: string[] } {
  type Node = { $ref?: string; properties?: Record<string, Node>; additionalProperties?: unknown; enum?: string[] };
  const deref = (n: Node): Node => (n.$ref ? deref((schema.definitions as Record<string, Node>)[n.$ref.replace('#/definitions/', '')]) : n);
  let node: Node | undefined = deref(schema as Node);
  for (const key of path) {
    const next: Node | undefined =
      node?.properties?.[key] ?? (typeof node?.additionalProperties === 'object' ? (node.additionalProperties as Node) : undefined);
    node = next && deref(next);
  }
  return node ?? {};
}

/** Items for lists that are empty in values.yaml. */
const ITEMS: Record<string, unknown> = {
  imagePullSecrets: { name: 'registry-login' },
  tolerations: { key: 'dedicated', operator: 'Exists', effect: 'NoSchedule' },
  topologySpreadConstraints: { maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'DoNotSchedule' },
  'ingress.tls': { secretName: 'relay-hub-tls', hosts: ['relay-hub.example.com'] },
};
const VALID_STRING = 'mutated-value-0123456789abcdefghijklmnop';

/** A different value for the leaf at `path` whose current value is `value`, valid where it can be. */
function mutation(path: string[], value: unknown): unknown {
  if (typeof value === 'boolean') return !value;
  if (typeof value === 'number') return value + 1;
  if (Array.isArray(value)) return value.length > 0 ? [...value, value[0]] : [ITEMS[path.join('.')]];
  if (typeof value === 'string') {
    const allowed = schemaAt(path).enum;
    if (allowed) return allowed.find((v) => v !== value);
    if (value === '') return VALID_STRING;
    return /\d+/.test(value) ? value.replace(/\d+/, (n) => String(Number(n) + 1)) : `${value}-mutated`;
  }
  return { 'mutated-key': 'mutated-value' };
}

const setsLeaf = (combo: Values, path: string[]) => at(combo, path) !== undefined;

function withLeaf(path: string[], value: unknown): Values {
  return path.reduceRight<unknown>((inner, key) => ({ [key]: inner }), value) as Values;
}

describe('values.yaml', () => {
  test('every value changes what helm renders, in at least one supported combination', async () => {
    const combos = [EVERYTHING_ON, ...Object.values(COMBINATIONS)];
    const baselines = await eachLimited(combos, 3, (c) => template(c));
    for (const b of baselines) expect(b.code).toBe(0);
    const unused = await eachLimited(leaves(defaults), 3, async (path) => {
      // Combinations that set this value themselves first (redis.url is read only with an external Redis).
      const order = [...combos.keys()].sort((a, b) => Number(setsLeaf(combos[b], path)) - Number(setsLeaf(combos[a], path)));
      for (const i of order) {
        const current = at(mergeValues(defaults, combos[i]), path);
        const changed = await template([combos[i], withLeaf(path, mutation(path, current))]);
        if (changed.code === 0 && changed.stdout !== baselines[i].stdout) return null;
      }
      return path.join('.');
    });
    expect(unused.filter(Boolean)).toEqual([]);
  }, 120_000);

  test('every .Values path a template reads is declared in values.yaml', () => {
    // Helm renders a missing key as empty without a word, lint --strict included: read the templates.
    const used = new Set<string>();
    for (const file of readdirSync(join(CHART, 'templates'))) {
      const text = readFileSync(join(CHART, 'templates', file), 'utf8');
      for (const action of text.matchAll(/\{\{-?([\s\S]*?)-?\}\}/g)) {
        for (const m of action[1].matchAll(/\.Values((?:\.[A-Za-z_][A-Za-z0-9_]*)+)/g)) used.add(m[1].slice(1));
      }
    }
    expect(used.size).toBeGreaterThan(50);
    expect([...used].filter((p) => at(defaults, p.split('.')) === undefined)).toEqual([]);
  });

  test('values.schema.json describes every key (none passes only because the schema is open)', () => {
    type Node = { properties?: Record<string, Node>; additionalProperties?: boolean | Node; $ref?: string; description?: string };
    const definitions = schema.definitions as Record<string, Node>;
    const deref = (node: Node): Node => (node.$ref ? deref(definitions[node.$ref.replace('#/definitions/', '')]) : node);
    const undescribed = leaves(defaults).filter((path) => {
      let node = deref(schema);
      for (const key of path) {
        const next = node.properties?.[key] ?? (typeof node.additionalProperties === 'object' ? node.additionalProperties : undefined);
        if (next) {
          node = deref(next);
          continue;
        }
        // A Kubernetes object passed through as is (securityContext, HPA behavior…): described as a whole.
        return !(node.additionalProperties === undefined && node.description);
      }
      return false;
    });
    expect(undescribed.map((p) => p.join('.'))).toEqual([]);
    expect(schema.additionalProperties).toBe(false);
    expect((schema as { $schema?: string }).$schema).toBe('http://json-schema.org/draft-07/schema#');
  });
});
