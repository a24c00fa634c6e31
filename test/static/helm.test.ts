// helm/relay-hub, checked without helm: Chart.yaml and values.yaml parse strictly; templates are
// checked for balanced actions, defined includes, and a two-way match between the `.Values` paths
// they use and the keys values.yaml declares; then the settings relay-hub depends on.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import Ajv, { type AnySchema } from 'ajv';
import { parse } from 'yaml';
import { configSchema } from '../../src/config/config.schema';

const CHART = join(__dirname, '..', '..', 'helm', 'relay-hub');
const TEMPLATES = join(CHART, 'templates');

type Values = Record<string, unknown>;

function strictYaml(file: string): unknown {
  // uniqueKeys + strict: duplicate keys and YAML-1.1-isms are errors, as they are for helm.
  return parse(readFileSync(file, 'utf8'), { strict: true, uniqueKeys: true, prettyErrors: true });
}

const chart = strictYaml(join(CHART, 'Chart.yaml')) as Record<string, unknown>;
const values = strictYaml(join(CHART, 'values.yaml')) as Values;
const templateFiles = readdirSync(TEMPLATES).sort();
const templates = new Map(templateFiles.map((f) => [f, readFileSync(join(TEMPLATES, f), 'utf8')]));
const template = (name: string) => templates.get(name) ?? '';

/** `{{ … }}` actions of a template, trim markers removed. */
function actions(text: string): string[] {
  return [...text.matchAll(/\{\{-?\s*([\s\S]*?)\s*-?\}\}/g)].map((m) => m[1]);
}

/** Every .Values.a.b path used in the templates (also as $.Values…). */
function referencedPaths(): string[][] {
  const paths: string[][] = [];
  for (const text of templates.values()) {
    for (const action of actions(text)) {
      for (const m of action.matchAll(/\.Values((?:\.[A-Za-z_][A-Za-z0-9_]*)+)/g)) paths.push(m[1].slice(1).split('.'));
    }
  }
  return paths;
}

/** Leaves of values.yaml: scalars, lists, and empty maps (maps with keys are walked into). */
function leaves(node: unknown, path: string[] = []): string[][] {
  if (node && typeof node === 'object' && !Array.isArray(node) && Object.keys(node).length > 0) {
    return Object.entries(node).flatMap(([k, v]) => leaves(v, [...path, k]));
  }
  return [path];
}

function lookup(path: string[]): { found: boolean; value?: unknown } {
  let node: unknown = values;
  for (const key of path) {
    if (!node || typeof node !== 'object' || Array.isArray(node) || !(key in node)) return { found: false };
    node = (node as Values)[key];
  }
  return { found: true, value: node };
}

const isPrefix = (prefix: string[], path: string[]) => prefix.length <= path.length && prefix.every((k, i) => path[i] === k);

describe('helm/relay-hub', () => {
  test('Chart.yaml is a v2 application chart named relay-hub', () => {
    expect(chart).toMatchObject({ apiVersion: 'v2', name: 'relay-hub', type: 'application' });
    expect(chart.version).toMatch(/^\d+\.\d+\.\d+(-[\w.]+)?$/);
    expect(typeof chart.appVersion).toBe('string');
  });

  test('has the templates a production deployment needs', () => {
    expect(templateFiles).toEqual(
      expect.arrayContaining([
        '_helpers.tpl',
        'deployment.yaml',
        'service.yaml',
        'ingress.yaml',
        'pdb.yaml',
        'hpa.yaml',
        'secret.yaml',
        'configmap.yaml',
        'redis.yaml',
        'NOTES.txt',
      ]),
    );
  });

  test('template actions are balanced and every include names a defined template', () => {
    const defined = new Set<string>();
    for (const text of templates.values()) {
      for (const a of actions(text)) {
        const m = /^define\s+"([^"]+)"/.exec(a);
        if (m) defined.add(m[1]);
      }
    }
    for (const [file, text] of templates) {
      const opened = text.split('{{').length - 1;
      expect({ file, opened, closed: text.split('}}').length - 1 }).toEqual({ file, opened, closed: opened });
      let depth = 0;
      for (const a of actions(text)) {
        if (a.startsWith('/*')) continue;
        if (/^(if|with|range|define|block)\b/.test(a)) depth++;
        else if (/^end\b/.test(a)) depth--;
        else if (/^else\b/.test(a)) expect({ file, elseOutsideBlock: depth < 1 }).toEqual({ file, elseOutsideBlock: false });
        expect({ file, unbalanced: depth < 0 }).toEqual({ file, unbalanced: false });
        for (const m of a.matchAll(/\b(?:include|template)\s+"([^"]+)"/g)) {
          expect({ file, include: m[1], defined: defined.has(m[1]) }).toEqual({ file, include: m[1], defined: true });
        }
      }
      expect({ file, depth }).toEqual({ file, depth: 0 });
    }
  });

  test('every .Values path a template uses exists in values.yaml', () => {
    const missing = referencedPaths()
      .filter((p) => !lookup(p).found)
      .map((p) => p.join('.'));
    expect([...new Set(missing)]).toEqual([]);
  });

  test('every value in values.yaml is used by a template', () => {
    const refs = referencedPaths();
    // A leaf counts as used when a template names it or a map above it (toYaml, range, with).
    const unused = leaves(values)
      .filter((leaf) => !refs.some((r) => isPrefix(r, leaf)))
      .map((p) => p.join('.'));
    expect(unused).toEqual([]);
  });

  test('non-secret config keys are hub settings', () => {
    const known = new Set(Object.values(configSchema).map((entry) => entry.env));
    const config = values.config as Record<string, unknown>;
    expect(Object.keys(config).filter((k) => !known.has(k))).toEqual([]);
    for (const [key, value] of Object.entries(config)) expect({ key, type: typeof value }).toEqual({ key, type: 'string' });
    const sensitive = Object.values(configSchema)
      .filter((e) => 'sensitive' in e && e.sensitive)
      .map((e) => e.env);
    expect(Object.keys(config).filter((k) => sensitive.includes(k))).toEqual([]);
  });

  test('probes: startup and liveness on /health/live, readiness on /health/ready', () => {
    const deployment = template('deployment.yaml');
    for (const [probe, path] of [
      ['startupProbe', '/health/live'],
      ['livenessProbe', '/health/live'],
      ['readinessProbe', '/health/ready'],
    ]) {
      expect(deployment).toMatch(new RegExp(`${probe}:\\s*\\n\\s*httpGet:\\s*\\n\\s*path: ${path}\\b`));
    }
  });

  test('termination outlasts the preStop sleep plus the SHUTDOWN_GRACE_MS drain', () => {
    const shutdown = values.shutdown as { graceMs: number; preStopSleepSeconds: number; extraTerminationSeconds: number };
    expect(shutdown.graceMs).toBe(configSchema.SHUTDOWN_GRACE_MS.default);
    expect(shutdown.preStopSleepSeconds).toBeGreaterThan(0);
    expect(shutdown.extraTerminationSeconds).toBeGreaterThan(0);
    const deployment = template('deployment.yaml');
    // terminationGracePeriodSeconds is computed from all three, so it cannot drift below the drain.
    const line = /terminationGracePeriodSeconds:(.*)/.exec(deployment)![1];
    expect(line).toMatch(/\.Values\.shutdown\.preStopSleepSeconds/);
    expect(line).toMatch(/relay-hub\.graceSeconds/);
    expect(line).toMatch(/\.Values\.shutdown\.extraTerminationSeconds/);
    expect(template('_helpers.tpl')).toMatch(/define "relay-hub\.graceSeconds"[\s\S]*?\.Values\.shutdown\.graceMs/);
    expect(template('configmap.yaml')).toMatch(/SHUTDOWN_GRACE_MS:.*\.Values\.shutdown\.graceMs/);
    expect(deployment).toMatch(/preStop:[\s\S]*?"sleep", "\{\{ \.Values\.shutdown\.preStopSleepSeconds \}\}"/);
  });

  test('pods run non-root on a read-only root filesystem with a writable /tmp', () => {
    expect(values.podSecurityContext).toMatchObject({ runAsNonRoot: true });
    expect((values.podSecurityContext as { runAsUser: number }).runAsUser).toBeGreaterThan(0);
    expect(values.securityContext).toMatchObject({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false });
    expect((values.resources as { requests?: unknown }).requests).toBeDefined();
    expect(template('deployment.yaml')).toMatch(/mountPath: \/tmp/);
    for (const key of Object.keys(configSchema).filter((k) => k.endsWith('_FILE')))
      expect({ key, underTmp: new RegExp(`^\\s*${key}: /tmp/`, 'm').test(template('configmap.yaml')) }).toEqual({ key, underTmp: true });
  });

  test('PDB, HPA and Ingress use current APIs; the Ingress pins long-polling sessions by client address', () => {
    expect(template('pdb.yaml')).toMatch(/^apiVersion: policy\/v1$/m);
    expect(template('hpa.yaml')).toMatch(/^apiVersion: autoscaling\/v2$/m);
    expect(template('ingress.yaml')).toMatch(/^apiVersion: networking\.k8s\.io\/v1$/m);
    const ingress = values.ingress as { className: string; annotations: Record<string, string> };
    const annotations = ingress.annotations;
    expect(ingress.className).toBe('nginx'); // the annotations below are ingress-nginx's
    expect(Number(annotations['nginx.ingress.kubernetes.io/proxy-read-timeout'])).toBeGreaterThanOrEqual(3600);
    expect(Number(annotations['nginx.ingress.kubernetes.io/proxy-send-timeout'])).toBeGreaterThanOrEqual(3600);
    // A default Socket.IO client polls first: every request of its session must reach the pod that
    // holds it. Hashing by address works for every client; cookie affinity only for browsers.
    expect(annotations['nginx.ingress.kubernetes.io/upstream-hash-by']).toBe('$remote_addr');
    expect(Object.keys(annotations).filter((k) => /affinity|session-cookie/.test(k))).toEqual([]);
    // kube-proxy affinity would pin every client of an ingress pod to one hub.
    expect(template('service.yaml')).not.toMatch(/sessionAffinity:\s*ClientIP/);
    expect(template('NOTES.txt')).toMatch(/upstream-hash-by/);
  });

  test('secrets come from the chart Secret or existingSecret; Redis from the chart or redis.url', () => {
    const secret = template('secret.yaml');
    for (const key of ['JWT_SECRET', 'AGENT_API_KEYS', 'REDIS_URL']) {
      expect(secret).toMatch(new RegExp(`^\\s*${key}:`, 'm'));
      expect(template('deployment.yaml')).toMatch(new RegExp(`- name: ${key}\\b`));
    }
    expect(secret).toMatch(/^\{\{-? if not \.Values\.existingSecret \}\}/);
    expect(secret).toMatch(/required "[^"]*jwtSecret[^"]*" \.Values\.secrets\.jwtSecret/);
    expect(template('_helpers.tpl')).toMatch(/define "relay-hub\.secretName"[\s\S]*?\.Values\.existingSecret/);
    const redis = template('redis.yaml');
    expect(redis).toMatch(/^\{\{-? if \.Values\.redis\.enabled \}\}/);
    expect(redis).toMatch(/kind: StatefulSet/);
    expect(redis).toMatch(/- --appendonly\s*\n\s*- "yes"/);
  });
});

describe('helm/relay-hub/values.schema.json', () => {
  // helm validates the merged values against the chart's values.schema.json on install, upgrade,
  // lint and template; it reads JSON Schema draft-07, which is Ajv's default draft.
  const schema = JSON.parse(readFileSync(join(CHART, 'values.schema.json'), 'utf8')) as Record<string, unknown>;
  const validate = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true }).compile(schema as AnySchema);
  const withValues = (patch: (v: Values) => void): Values => {
    const copy = structuredClone(values);
    patch(copy);
    return copy;
  };
  const errorsOf = (candidate: Values) =>
    validate(candidate)
      ? []
      : (validate.errors ?? []).map(
          (e) => `${e.instancePath || '/'} ${e.message}${e.params.additionalProperty ? `: ${e.params.additionalProperty}` : ''}`,
        );

  test('is a draft-07 schema that accepts the shipped values.yaml', () => {
    expect(schema.$schema).toBe('http://json-schema.org/draft-07/schema#');
    expect(errorsOf(values)).toEqual([]);
  });

  test('describes every key of values.yaml (no key passes only because the schema is open)', () => {
    type Node = { properties?: Record<string, Node>; additionalProperties?: boolean | Node; $ref?: string; description?: string };
    const definitions = (schema.definitions ?? {}) as Record<string, Node>;
    const deref = (node: Node): Node => (node.$ref ? deref(definitions[node.$ref.replace('#/definitions/', '')]) : node);
    const undescribed = leaves(values).filter((path) => {
      let node = deref(schema);
      for (const key of path) {
        const next = node.properties?.[key] ?? (typeof node.additionalProperties === 'object' ? node.additionalProperties : undefined);
        if (next) {
          node = deref(next);
          continue;
        }
        // A Kubernetes object passed through as is (securityContext, HPA behavior…): described as a
        // whole, not key by key.
        return !(node.additionalProperties === undefined && node.description);
      }
      return false;
    });
    expect(undescribed.map((p) => p.join('.'))).toEqual([]);
    expect(schema.additionalProperties).toBe(false);
  });

  test.each([
    ['a misspelt top-level key', (v: Values) => (v.replicas = 3), '/ must NOT have additional properties: replicas'],
    ['no replicas', (v: Values) => (v.replicaCount = 0), '/replicaCount must be >= 1'],
    ['a boolean hub setting', (v: Values) => ((v.config as Values).API_DOCS_ENABLED = true), '/config/API_DOCS_ENABLED must be string'],
    [
      'a numeric annotation',
      (v: Values) => (((v.ingress as Values).annotations as Values)['nginx.ingress.kubernetes.io/proxy-read-timeout'] = 3600),
      '/ingress/annotations/nginx.ingress.kubernetes.io~1proxy-read-timeout must be string',
    ],
    [
      'a short JWT secret',
      (v: Values) => ((v.secrets as Values).jwtSecret = 'too-short'),
      '/secrets/jwtSecret must NOT have fewer than 32 characters',
    ],
    [
      'an unknown pull policy',
      (v: Values) => ((v.image as Values).pullPolicy = 'Sometimes'),
      '/image/pullPolicy must be equal to one of the allowed values',
    ],
    [
      'a Redis URL of another scheme',
      (v: Values) => ((v.redis as Values).url = 'http://redis:6379'),
      '/redis/url must match pattern "^$|^rediss?://"',
    ],
  ])('rejects %s', (_what, patch, message) => {
    expect(errorsOf(withValues(patch))).toContain(message);
  });
});
