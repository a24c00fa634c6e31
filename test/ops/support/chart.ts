// helm/relay-hub rendered by real Helm (test/helpers/helm.ts): the value combinations the chart
// supports, `helm template`/`lint` on any values, the rendered objects parsed, and their validation
// against the Kubernetes schemas (test/helpers/k8s-validate.mjs).
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments, parse } from 'yaml';
import { helm, KUBE_VERSION, type HelmResult } from '../../helpers/helm';

export const ROOT = join(__dirname, '..', '..', '..');
export const CHART = join(ROOT, 'helm', 'relay-hub');
export const RELEASE = 'hub';
export const NAMESPACE = 'chat';

export type Values = Record<string, unknown>;

/** A Kubernetes object as rendered. */
export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [field: string]: unknown;
}

/** Secrets a test may look for in the output: each is long and unique, so a leak is found by substring. */
export const SECRETS = {
  jwtSecret: 'jwt-secret-for-chart-tests-0123456789abcdef',
  agentApiKeys: 'agent-key-for-chart-tests-0001,agent-key-for-chart-tests-0002',
  redisPassword: 'redis-password-for-chart-tests-0123',
  metricsToken: 'metrics-token-for-chart-tests-0123456789',
  adminJwtSecret: 'admin-jwt-secret-for-chart-tests-0123456789',
  jwtPreviousSecrets: 'previous-jwt-secret-for-chart-tests-012345',
} as const;

const allOn = {
  ingress: { enabled: true, tls: [{ secretName: 'relay-hub-tls', hosts: ['relay-hub.example.com'] }] },
  autoscaling: { enabled: true },
  podDisruptionBudget: { enabled: true },
  networkPolicy: { enabled: true },
  monitoring: { serviceMonitor: { enabled: true }, prometheusRule: { enabled: true }, dashboard: { enabled: true } },
};
const allOff = {
  ingress: { enabled: false },
  autoscaling: { enabled: false },
  podDisruptionBudget: { enabled: false },
  networkPolicy: { enabled: false },
  monitoring: { serviceMonitor: { enabled: false }, prometheusRule: { enabled: false }, dashboard: { enabled: false } },
};

/**
 * The supported combinations, as values given on top of values.yaml: each Redis topology (in-chart,
 * external REDIS_URL, Sentinel, Cluster; chart Secret or existingSecret) and the optional parts
 * (Ingress, HPA, PDB, NetworkPolicy, monitoring) on and off.
 */
export const COMBINATIONS: Record<string, Values> = {
  'defaults (in-chart Redis, HPA, PDB, NetworkPolicy; no Ingress, no monitoring)': {
    secrets: {
      jwtSecret: SECRETS.jwtSecret,
      adminJwtSecret: SECRETS.adminJwtSecret,
      agentApiKeys: SECRETS.agentApiKeys,
      redisPassword: SECRETS.redisPassword,
    },
  },
  'in-chart Redis, everything on (Ingress with TLS, HPA, PDB, NetworkPolicy, monitoring)': {
    ...allOn,
    secrets: { ...SECRETS },
  },
  'in-chart Redis without persistence, everything off, fixed replicas': {
    ...allOff,
    replicaCount: 2,
    redis: { persistence: { enabled: false } },
    secrets: {
      jwtSecret: SECRETS.jwtSecret,
      adminJwtSecret: SECRETS.adminJwtSecret,
      agentApiKeys: SECRETS.agentApiKeys,
      redisPassword: SECRETS.redisPassword,
    },
  },
  'in-chart Redis with existingSecret, monitoring on': {
    existingSecret: 'relay-hub-secrets',
    monitoring: allOn.monitoring,
  },
  'external REDIS_URL, Ingress on, monitoring off': {
    ingress: { enabled: true },
    redis: { enabled: false, url: 'rediss://redis.example.com:6380/0' },
    secrets: {
      jwtSecret: SECRETS.jwtSecret,
      adminJwtSecret: SECRETS.adminJwtSecret,
      agentApiKeys: SECRETS.agentApiKeys,
      metricsToken: SECRETS.metricsToken,
    },
  },
  'external REDIS_URL from existingSecret, everything off': {
    ...allOff,
    existingSecret: 'relay-hub-secrets',
    redis: { enabled: false },
  },
  'Redis Sentinel, everything on': {
    ...allOn,
    redis: { enabled: false, sentinels: 'sentinel-0.redis:26379,sentinel-1.redis:26379', sentinelName: 'relay' },
    secrets: {
      jwtSecret: SECRETS.jwtSecret,
      adminJwtSecret: SECRETS.adminJwtSecret,
      agentApiKeys: SECRETS.agentApiKeys,
      metricsToken: SECRETS.metricsToken,
    },
  },
  'Redis Cluster with existingSecret, HPA off, monitoring on with sendMetricsToken': {
    existingSecret: 'relay-hub-secrets',
    autoscaling: { enabled: false },
    redis: { enabled: false, clusterNodes: 'redis-0.redis:6379,redis-1.redis:6379,redis-2.redis:6379' },
    monitoring: { ...allOn.monitoring, serviceMonitor: { enabled: true, sendMetricsToken: true } },
  },
};

/** The combination with every optional part on: the base that bad values are set on. */
export const EVERYTHING_ON = COMBINATIONS['in-chart Redis, everything on (Ingress with TLS, HPA, PDB, NetworkPolicy, monitoring)'];

let scratch: string | undefined;
let files = 0;

/** A values file holding `values` (JSON is YAML), in a folder removed when the process exits. */
export function valuesFile(values: Values): string {
  if (!scratch) {
    const dir = mkdtempSync(join(tmpdir(), 'relay-hub-chart-'));
    scratch = dir;
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  }
  const file = join(scratch, `values-${files++}.json`);
  writeFileSync(file, JSON.stringify(values));
  return file;
}

/** `-f` for each values object, in order (later ones win, as with helm's own -f). */
const valuesArgs = (values: Values | Values[]) => (Array.isArray(values) ? values : [values]).flatMap((v) => ['-f', valuesFile(v)]);

/** `helm template` of `chart` (the chart folder or a packaged .tgz) with `values` on top of values.yaml. */
export function template(values: Values | Values[], chart = CHART): Promise<HelmResult> {
  return helm(['template', RELEASE, chart, '--namespace', NAMESPACE, '--kube-version', KUBE_VERSION, ...valuesArgs(values)]);
}

/** `helm lint --strict` with `values` on top of values.yaml. */
export function lint(values: Values | Values[], chart = CHART): Promise<HelmResult> {
  return helm(['lint', '--strict', chart, '--namespace', NAMESPACE, '--kube-version', KUBE_VERSION, ...valuesArgs(values)]);
}

/** Values merged the way Helm merges values files: maps key by key, anything else replaced, null deletes. */
export function mergeValues(base: Values, over: Values): Values {
  const out: Values = { ...base };
  for (const [key, value] of Object.entries(over)) {
    const current = out[key];
    if (value === null) delete out[key];
    else if (isMap(value) && isMap(current)) out[key] = mergeValues(current, value);
    else out[key] = value;
  }
  return out;
}

const isMap = (v: unknown): v is Values => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Runs `task` over `items`, `width` at a time (helm is a process each: two cores, other tests). */
export async function eachLimited<T, R>(items: T[], width: number, task: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await task(items[i]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, worker));
  return results;
}

/** The objects of a `helm template` output, in order (comments and empty documents dropped). */
export function objectsOf(manifest: string): K8sObject[] {
  return parseAllDocuments(manifest)
    .map((doc) => {
      if (doc.errors.length > 0) throw new Error(`helm rendered invalid YAML: ${doc.errors[0].message}`);
      return doc.toJS({ maxAliasCount: -1 }) as K8sObject | null;
    })
    .filter((o): o is K8sObject => o !== null);
}

/** Renders `values` and returns the objects; fails with helm's message when helm refuses. */
export async function render(values: Values | Values[], chart = CHART): Promise<K8sObject[]> {
  const result = await template(values, chart);
  if (result.code !== 0) throw new Error(`helm template failed (${result.code}): ${result.stderr}`);
  return objectsOf(result.stdout);
}

/** The single object of `kind` (and `name` when given); throws when there is not exactly one. */
export function one(objects: K8sObject[], kind: string, name?: string): K8sObject & Record<string, any> {
  const found = objects.filter((o) => o.kind === kind && (name === undefined || o.metadata.name === name));
  if (found.length !== 1) throw new Error(`expected one ${kind}${name ? ` ${name}` : ''}, found ${found.length}`);
  return found[0] as K8sObject & Record<string, any>;
}

export interface Validation {
  apiVersion: string;
  kind: string;
  name: string;
  errors: string[];
}

/** Validates `objects` against the Kubernetes (and Prometheus Operator) schemas; one result per object. */
export function validateObjects(objects: K8sObject[]): Promise<Validation[]> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      process.execPath,
      [join(ROOT, 'test', 'helpers', 'k8s-validate.mjs')],
      { cwd: ROOT, maxBuffer: 64 * 1024 * 1024, timeout: 60_000 },
      (err, stdout, stderr) => {
        if (err) return reject(new Error(`k8s-validate failed: ${stderr || err.message}`));
        resolve(JSON.parse(stdout) as Validation[]);
      },
    );
    child.stdin!.end(JSON.stringify(objects));
  });
}

/** values.yaml as Helm reads it. */
export function defaultValues(): Values {
  return parse(readFileSync(join(CHART, 'values.yaml'), 'utf8'), { strict: true, uniqueKeys: true }) as Values;
}
