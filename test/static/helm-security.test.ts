// helm/relay-hub hardening (issue 10), checked without helm like test/static/helm.test.ts: Redis
// with a password, reachable only from hub pods, capped with noeviction; hub memory limits that fit
// MAX_CONNECTIONS; /metrics never public without METRICS_TOKEN; admin tokens' secret wired.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';

const CHART = join(__dirname, '..', '..', 'helm', 'relay-hub');
const read = (file: string) => readFileSync(join(CHART, file), 'utf8');
interface ChartValues {
  networkPolicy: unknown;
  config: Record<string, string>;
  resources: { limits: { memory: string } };
  redis: { maxmemory: string; resources: { limits: { memory: string } } };
}
const values = parse(read('values.yaml'), { strict: true, uniqueKeys: true }) as ChartValues;

/** Bytes of a Kubernetes quantity (Mi, Gi) or a Redis size (mb, gb). */
function bytes(quantity: string): number {
  const m = /^(\d+)(Ki|Mi|Gi|kb|mb|gb)$/.exec(quantity);
  if (!m) throw new Error(`unexpected quantity ${quantity}`);
  const unit = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, kb: 2 ** 10, mb: 2 ** 20, gb: 2 ** 30 }[m[2] as 'Ki'];
  return Number(m[1]) * unit;
}

describe('helm/relay-hub security', () => {
  const redis = read('templates/redis.yaml');
  const secret = read('templates/secret.yaml');
  const deployment = read('templates/deployment.yaml');

  test('the in-chart Redis requires a password, which the chart demands and puts in the hub URL', () => {
    expect(redis).toMatch(/- --requirepass\s*\n\s*- \$\(REDIS_PASSWORD\)/);
    expect(redis).toMatch(/- name: REDIS_PASSWORD\s*\n\s*valueFrom:\s*\n\s*secretKeyRef:[\s\S]*?key: REDIS_PASSWORD/);
    expect(redis).toMatch(/- name: REDISCLI_AUTH/); // the redis-cli probes authenticate too
    expect(secret).toMatch(/REDIS_PASSWORD: \{\{ required "[^"]*redisPassword[^"]*" \.Values\.secrets\.redisPassword/);
    expect(read('templates/_helpers.tpl')).toMatch(
      /define "relay-hub\.redis\.url"[\s\S]*?redis:\/\/:%s@%s:6379[\s\S]*?\.Values\.secrets\.redisPassword \| urlquery/,
    );
    // With existingSecret, the hub builds the URL from that Secret's REDIS_PASSWORD, read into a
    // variable that is not the hub's REDIS_PASSWORD key (which it refuses beside REDIS_URL).
    expect(deployment).toMatch(
      /- name: IN_CHART_REDIS_PASSWORD\s*\n\s*valueFrom:\s*\n\s*secretKeyRef:[\s\S]*?key: REDIS_PASSWORD\s*\n\s*- name: REDIS_URL\s*\n\s*value: \{\{ printf "redis:\/\/:\$\(IN_CHART_REDIS_PASSWORD\)@%s:6379"/,
    );
  });

  test('a NetworkPolicy lets only hub pods reach Redis, on by default', () => {
    expect(values.networkPolicy).toEqual({ enabled: true });
    const policy = read('templates/networkpolicy.yaml');
    expect(policy).toMatch(/^\{\{- if and \.Values\.redis\.enabled \.Values\.networkPolicy\.enabled \}\}/);
    expect(policy).toMatch(/^apiVersion: networking\.k8s\.io\/v1$/m);
    expect(policy).toMatch(/^kind: NetworkPolicy$/m);
    expect(policy).toMatch(/^spec:\s*\n\s*podSelector:\s*\n\s*matchLabels:\s*\n\s*\{\{- include "relay-hub\.redis\.selectorLabels"/m);
    expect(policy).toMatch(/policyTypes:\s*\n\s*- Ingress/);
    expect(policy).toMatch(/- from:\s*\n\s*- podSelector:\s*\n\s*matchLabels:\s*\n\s*\{\{- include "relay-hub\.selectorLabels"/);
    expect(policy).toMatch(/port: 6379/);
    // Hub and Redis selector labels differ (component), so the policy does not select Redis itself.
    expect(read('templates/_helpers.tpl')).toMatch(/define "relay-hub\.selectorLabels"[\s\S]*?component: hub/);
  });

  test('Redis has a maxmemory below its container limit, with noeviction (state and log are never evicted)', () => {
    expect(redis).toMatch(/- --maxmemory\s*\n\s*- \{\{ \.Values\.redis\.maxmemory \| quote \}\}/);
    expect(redis).toMatch(/- --maxmemory-policy\s*\n\s*- noeviction/);
    expect(bytes(values.redis.maxmemory)).toBeLessThanOrEqual(0.85 * bytes(values.redis.resources.limits.memory));
  });

  test('the hub memory limit fits MAX_CONNECTIONS (16 KiB per idle connection + 128 MiB, with 25% headroom)', () => {
    const maxConnections = Number(values.config.MAX_CONNECTIONS);
    expect(maxConnections).toBeGreaterThan(0);
    const needed = (maxConnections * 16 * 2 ** 10 + 128 * 2 ** 20) * 1.25;
    expect(needed).toBeLessThanOrEqual(bytes(values.resources.limits.memory));
  });

  test('/metrics is never public without METRICS_TOKEN: required with the Ingress, the pod needs it there', () => {
    expect(secret).toMatch(
      /\{\{- if \.Values\.ingress\.enabled \}\}\s*\n\s*METRICS_TOKEN: \{\{ required "[^"]*metricsToken[^"]*" \.Values\.secrets\.metricsToken/,
    );
    expect(deployment).toMatch(/key: METRICS_TOKEN\s*\n(?:\s*#.*\n)*\s*optional: \{\{ not \.Values\.ingress\.enabled \}\}/);
    expect(read('templates/configmap.yaml')).toMatch(/\$owned := list[^}]*"METRICS_TOKEN"/);
  });

  test('ADMIN_JWT_SECRET reaches the hub from the chart Secret or existingSecret, never the ConfigMap', () => {
    expect(secret).toMatch(/ADMIN_JWT_SECRET: \{\{ \. \| quote \}\}/);
    expect(deployment).toMatch(
      /- name: ADMIN_JWT_SECRET\s*\n\s*valueFrom:\s*\n\s*secretKeyRef:[\s\S]*?key: ADMIN_JWT_SECRET\s*\n\s*optional: true/,
    );
    expect(read('templates/configmap.yaml')).toMatch(/\$owned := list[^}]*"ADMIN_JWT_SECRET"/);
  });
});
