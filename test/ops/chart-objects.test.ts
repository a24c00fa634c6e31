// What helm/relay-hub renders, asserted on the objects real Helm renders (test/ops/support/chart.ts):
// probes, the shutdown sequence against SHUTDOWN_GRACE_MS, security contexts, memory against
// MAX_CONNECTIONS, the Dockerfile's node flags, where secrets go (never a ConfigMap), Redis hardening,
// the NetworkPolicy, the Ingress and the monitoring objects.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { configSchema } from '../../src/config/config.schema';
import { botsRedisHolds, fits, SIZING_RULE } from '../helpers/sizing-rule';
import { COMBINATIONS, one, RELEASE, render, ROOT, SECRETS, type K8sObject, type Values } from './support/chart';

const FULLNAME = `${RELEASE}-relay-hub`;
const REDIS = `${FULLNAME}-redis`;
const combos = Object.entries(COMBINATIONS);
const rendered = new Map<string, K8sObject[]>();
let defaults: K8sObject[];
let allOn: K8sObject[];

beforeAll(async () => {
  for (const [name, values] of combos) rendered.set(name, await render(values));
  defaults = rendered.get(combos[0][0])!;
  allOn = rendered.get(combos[1][0])!;
});

const hubContainer = (objects: K8sObject[]) => one(objects, 'Deployment').spec.template.spec.containers[0];
const hubConfig = (objects: K8sObject[]): Record<string, string> => one(objects, 'ConfigMap', FULLNAME).data;
type EnvVar = { name: string; value?: string; valueFrom?: { secretKeyRef: { name: string; key: string; optional?: boolean } } };
const envOf = (container: { env?: EnvVar[] }) => new Map((container.env ?? []).map((e) => [e.name, e]));

/** Bytes of a Kubernetes quantity (Ki, Mi, Gi) or a Redis size (kb, mb, gb). */
function bytes(quantity: string): number {
  const m = /^(\d+)(Ki|Mi|Gi|kb|mb|gb)$/.exec(quantity);
  if (!m) throw new Error(`unexpected quantity ${quantity}`);
  return Number(m[1]) * { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, kb: 2 ** 10, mb: 2 ** 20, gb: 2 ** 30 }[m[2] as 'Ki'];
}

describe('the hub Deployment', () => {
  test('probes: startup and liveness on /health/live, readiness on /health/ready, on the http port', () => {
    for (const [name, objects] of rendered) {
      const c = hubContainer(objects);
      expect({ name, port: c.ports }).toEqual({ name, port: [{ name: 'http', containerPort: 3000, protocol: 'TCP' }] });
      expect({ name, startup: c.startupProbe.httpGet, live: c.livenessProbe.httpGet, ready: c.readinessProbe.httpGet }).toEqual({
        name,
        startup: { path: '/health/live', port: 'http' },
        live: { path: '/health/live', port: 'http' },
        ready: { path: '/health/ready', port: 'http' },
      });
      expect(hubConfig(objects).PORT).toBe('3000');
    }
  });

  test('termination outlasts the preStop sleep plus the SHUTDOWN_GRACE_MS drain', async () => {
    const check = (objects: K8sObject[], shutdown: { graceMs: number; preStopSleepSeconds: number; extraTerminationSeconds: number }) => {
      const pod = one(objects, 'Deployment').spec.template.spec;
      expect(hubConfig(objects).SHUTDOWN_GRACE_MS).toBe(String(shutdown.graceMs));
      expect(pod.containers[0].lifecycle.preStop).toEqual({ exec: { command: ['sleep', String(shutdown.preStopSleepSeconds)] } });
      expect(pod.terminationGracePeriodSeconds).toBe(
        shutdown.preStopSleepSeconds + Math.ceil(shutdown.graceMs / 1000) + shutdown.extraTerminationSeconds,
      );
      expect(pod.terminationGracePeriodSeconds * 1000).toBeGreaterThan(shutdown.preStopSleepSeconds * 1000 + shutdown.graceMs);
    };
    // The chart's default drain is the hub's own default.
    expect(configSchema.SHUTDOWN_GRACE_MS.default).toBe(20000);
    check(defaults, { graceMs: 20000, preStopSleepSeconds: 5, extraTerminationSeconds: 10 });
    // Computed, not fixed: a drain of 45.5 s rounds up to 46 s.
    const shutdown = { graceMs: 45500, preStopSleepSeconds: 7, extraTerminationSeconds: 3 };
    check(await render([COMBINATIONS[combos[0][0]], { shutdown }]), shutdown);
  });

  test('pods run non-root, without privilege escalation or capabilities, on a read-only root with a /tmp emptyDir', () => {
    for (const [name, objects] of rendered) {
      const pod = one(objects, 'Deployment').spec.template.spec;
      const c = pod.containers[0];
      expect({ name, automount: pod.automountServiceAccountToken, pod: pod.securityContext, container: c.securityContext }).toEqual({
        name,
        automount: false,
        pod: { runAsNonRoot: true, runAsUser: 1000, runAsGroup: 1000, fsGroup: 1000, seccompProfile: { type: 'RuntimeDefault' } },
        container: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
      });
      expect(c.volumeMounts).toEqual([{ name: 'tmp', mountPath: '/tmp' }]);
      expect(pod.volumes).toEqual([{ name: 'tmp', emptyDir: { sizeLimit: '64Mi' } }]);
      // Every file the hub writes goes to the writable /tmp of a read-only root.
      for (const key of Object.keys(configSchema).filter((k) => k.endsWith('_FILE')))
        expect({ key, path: hubConfig(objects)[key] }).toEqual({ key, path: expect.stringMatching(/^\/tmp\//) });
      expect(c.resources.requests).toEqual({ cpu: '100m', memory: '128Mi' });
    }
  });

  test('the memory limit fits MAX_CONNECTIONS and 150 maximum-size messages in flight below the high-water mark (docs/operations.md, "Sizing")', async () => {
    const fitsRule = (objects: K8sObject[]) => {
      const config = hubConfig(objects);
      const maxConnections = Number(config.MAX_CONNECTIONS);
      const highWater = Number(config.MEMORY_HIGH_WATER_RATIO);
      expect(maxConnections).toBeGreaterThan(0);
      expect(highWater).toBeGreaterThan(0);
      const load = {
        connections: maxConnections,
        messagesInFlight: SIZING_RULE.messagesInFlight,
        messageBytes: Number(config.MAX_MESSAGE_BYTES),
      };
      return fits(load, bytes(hubContainer(objects).resources.limits.memory), highWater);
    };
    for (const objects of rendered.values()) expect(fitsRule(objects)).toBe(true);
    // The check has teeth: the old default of 15000 connections on the same limit does not fit.
    expect(fitsRule(await render([COMBINATIONS[combos[0][0]], { config: { MAX_CONNECTIONS: '15000' } }]))).toBe(false);
  });

  test("runs the image's command, so the Dockerfile's node flags apply", () => {
    const dockerfile = readFileSync(join(ROOT, 'deploy', 'Dockerfile'), 'utf8');
    const cmd = JSON.parse(/^CMD (\[.*\])$/m.exec(dockerfile)![1]) as string[];
    expect(cmd).toEqual(['node', '--max-semi-space-size=16', '--no-allocation-site-pretenuring', 'dist/main.js']);
    const startScript = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start;
    expect(startScript).toContain(cmd.slice(0, 3).join(' '));
    for (const [name, objects] of rendered) {
      const c = hubContainer(objects);
      // A command or args here would replace the CMD and drop the flags; NODE_OPTIONS cannot carry them.
      expect({ name, command: c.command, args: c.args, nodeOptions: hubConfig(objects).NODE_OPTIONS }).toEqual({ name });
    }
  });

  test('config holds only hub settings, as strings, none of them secret', () => {
    const known = new Set(Object.values(configSchema).map((e) => e.env));
    const sensitive = new Set(
      Object.values(configSchema)
        .filter((e) => 'sensitive' in e && e.sensitive)
        .map((e) => e.env),
    );
    for (const [name, objects] of rendered) {
      const data = hubConfig(objects);
      expect({ name, unknown: Object.keys(data).filter((k) => !known.has(k)) }).toEqual({ name, unknown: [] });
      expect({ name, sensitive: Object.keys(data).filter((k) => sensitive.has(k)) }).toEqual({ name, sensitive: [] });
      for (const [key, value] of Object.entries(data)) expect({ key, type: typeof value }).toEqual({ key, type: 'string' });
    }
  });
});

describe('secrets', () => {
  test('never in a ConfigMap: no secret value appears in any ConfigMap of any combination', () => {
    for (const [name, objects] of rendered) {
      const configMaps = JSON.stringify(objects.filter((o) => o.kind === 'ConfigMap'));
      const leaked = Object.entries(SECRETS).filter(([, secret]) => secret.split(',').some((s) => configMaps.includes(s)));
      expect({ name, leaked: leaked.map(([k]) => k) }).toEqual({ name, leaked: [] });
    }
  });

  test('the chart Secret holds what the hub reads; the Deployment takes every secret from it by reference', () => {
    const secret = one(allOn, 'Secret').stringData;
    expect(secret).toEqual({
      JWT_SECRET: SECRETS.jwtSecret,
      AGENT_API_KEYS: SECRETS.agentApiKeys,
      JWT_PREVIOUS_SECRETS: SECRETS.jwtPreviousSecrets,
      ADMIN_JWT_SECRET: SECRETS.adminJwtSecret,
      METRICS_TOKEN: SECRETS.metricsToken,
      REDIS_PASSWORD: SECRETS.redisPassword,
      REDIS_URL: `redis://:${SECRETS.redisPassword}@${REDIS}:6379`,
    });
    const env = envOf(hubContainer(allOn));
    for (const [key, optional] of [
      ['JWT_SECRET', undefined],
      ['AGENT_API_KEYS', undefined],
      ['JWT_PREVIOUS_SECRETS', true],
      ['ADMIN_JWT_SECRET', undefined],
      ['REDIS_URL', undefined],
    ] as const) {
      expect(env.get(key)).toEqual({ name: key, valueFrom: { secretKeyRef: { name: FULLNAME, key, ...(optional ? { optional } : {}) } } });
    }
  });

  test('with existingSecret the chart makes no Secret and every reference names the existing one', () => {
    for (const [name, objects] of rendered) {
      const values = COMBINATIONS[name] as { existingSecret?: string };
      if (!values.existingSecret) continue;
      expect({ name, secrets: objects.filter((o) => o.kind === 'Secret') }).toEqual({ name, secrets: [] });
      const refs = JSON.stringify(objects).match(/"secretKeyRef":\{"name":"[^"]*"/g) ?? [];
      expect(refs.length).toBeGreaterThan(3);
      expect(new Set(refs)).toEqual(new Set([`"secretKeyRef":{"name":"${values.existingSecret}"`]));
    }
  });

  test('METRICS_TOKEN: required by the pod behind the Ingress (where /metrics is public), optional without', () => {
    for (const [name, objects] of rendered) {
      const ingress = objects.some((o) => o.kind === 'Ingress');
      const ref = envOf(hubContainer(objects)).get('METRICS_TOKEN')!;
      expect({ name, optional: ref.valueFrom!.secretKeyRef.optional }).toEqual({ name, optional: !ingress });
    }
  });

  test('Redis URL from the in-chart password with existingSecret: read into a variable the hub does not know, defined first', () => {
    const objects = rendered.get('in-chart Redis with existingSecret, monitoring on')!;
    const env = hubContainer(objects).env as { name: string }[];
    const names = env.map((e) => e.name);
    expect(env[names.indexOf('IN_CHART_REDIS_PASSWORD')]).toEqual({
      name: 'IN_CHART_REDIS_PASSWORD',
      valueFrom: { secretKeyRef: { name: 'relay-hub-secrets', key: 'REDIS_PASSWORD' } },
    });
    // $(VAR) expands only variables defined earlier in the list.
    expect(names.indexOf('IN_CHART_REDIS_PASSWORD')).toBeLessThan(names.indexOf('REDIS_URL'));
    expect(env[names.indexOf('REDIS_URL')]).toEqual({ name: 'REDIS_URL', value: `redis://:$(IN_CHART_REDIS_PASSWORD)@${REDIS}:6379` });
    expect(names).not.toContain('REDIS_PASSWORD'); // the hub refuses it beside REDIS_URL
  });

  test('Sentinel and Cluster: topology variables set, credentials optional from the Secret, no REDIS_URL', () => {
    const sentinel = envOf(hubContainer(rendered.get('Redis Sentinel, everything on')!));
    expect(sentinel.get('REDIS_SENTINELS')).toEqual({ name: 'REDIS_SENTINELS', value: 'sentinel-0.redis:26379,sentinel-1.redis:26379' });
    expect(sentinel.get('REDIS_SENTINEL_NAME')).toEqual({ name: 'REDIS_SENTINEL_NAME', value: 'relay' });
    const cluster = envOf(hubContainer(rendered.get('Redis Cluster with existingSecret, HPA off, monitoring on with sendMetricsToken')!));
    expect(cluster.get('REDIS_CLUSTER_NODES')).toEqual({
      name: 'REDIS_CLUSTER_NODES',
      value: 'redis-0.redis:6379,redis-1.redis:6379,redis-2.redis:6379',
    });
    for (const env of [sentinel, cluster]) {
      expect(env.has('REDIS_URL')).toBe(false);
      for (const key of ['REDIS_USERNAME', 'REDIS_PASSWORD', 'REDIS_SENTINEL_PASSWORD']) {
        expect(env.get(key)!.valueFrom!.secretKeyRef.optional).toBe(true);
      }
    }
  });
});

describe('the in-chart Redis', () => {
  const statefulSet = () => one(defaults, 'StatefulSet', REDIS);
  const arg = (args: string[], flag: string) => args[args.indexOf(flag) + 1];

  test('appendonly, a password it requires (probes included), maxmemory below its limit with noeviction', () => {
    const c = statefulSet().spec.template.spec.containers[0];
    expect(arg(c.args, '--appendonly')).toBe('yes');
    expect(arg(c.args, '--requirepass')).toBe('$(REDIS_PASSWORD)');
    expect(arg(c.args, '--maxmemory-policy')).toBe('noeviction');
    const ref = { valueFrom: { secretKeyRef: { name: FULLNAME, key: 'REDIS_PASSWORD' } } };
    expect(c.env).toEqual([
      { name: 'REDIS_PASSWORD', ...ref },
      { name: 'REDISCLI_AUTH', ...ref },
    ]);
    expect(bytes(arg(c.args, '--maxmemory'))).toBeLessThanOrEqual(0.85 * bytes(c.resources.limits.memory));
    // docs/operations.md and docs/deployment.md promise five bots at full quota on the default.
    const quota = Number(hubConfig(defaults).BOT_STORAGE_MAX_BYTES ?? configSchema.BOT_STORAGE_MAX_BYTES.default);
    expect(botsRedisHolds(bytes(arg(c.args, '--maxmemory')), quota)).toBe(5);
    expect(c.securityContext).toEqual({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } });
    expect(statefulSet().spec.template.spec.securityContext).toMatchObject({
      runAsNonRoot: true,
      seccompProfile: { type: 'RuntimeDefault' },
    });
  });

  test('only with redis.enabled; persistent volume unless turned off', () => {
    for (const [name, objects] of rendered) {
      const enabled = (COMBINATIONS[name] as { redis?: { enabled?: boolean } }).redis?.enabled !== false;
      expect({ name, statefulSets: objects.filter((o) => o.kind === 'StatefulSet').length }).toEqual({
        name,
        statefulSets: enabled ? 1 : 0,
      });
    }
    expect(statefulSet().spec.volumeClaimTemplates[0].spec.resources.requests.storage).toBe('1Gi');
    const ephemeral = one(rendered.get('in-chart Redis without persistence, everything off, fixed replicas')!, 'StatefulSet');
    expect(ephemeral.spec.volumeClaimTemplates).toBeUndefined();
    expect(ephemeral.spec.template.spec.volumes).toEqual([{ name: 'data', emptyDir: {} }]);
  });

  test('a NetworkPolicy, on by default, lets only hub pods reach it on 6379', () => {
    const policy = one(defaults, 'NetworkPolicy', REDIS).spec;
    const redisPods = statefulSet().spec.template.metadata.labels as Record<string, string>;
    const hubPods = one(defaults, 'Deployment').spec.template.metadata.labels as Record<string, string>;
    const selects = (selector: Record<string, string>, labels: Record<string, string>) =>
      Object.entries(selector).every(([k, v]) => labels[k] === v);
    expect(policy.policyTypes).toEqual(['Ingress']);
    expect(selects(policy.podSelector.matchLabels, redisPods)).toBe(true);
    expect(selects(policy.podSelector.matchLabels, hubPods)).toBe(false);
    expect(policy.ingress).toHaveLength(1);
    const [rule] = policy.ingress;
    expect(rule.ports).toEqual([{ protocol: 'TCP', port: 6379 }]);
    expect(rule.from).toHaveLength(1);
    expect(selects(rule.from[0].podSelector.matchLabels, hubPods)).toBe(true);
    expect(selects(rule.from[0].podSelector.matchLabels, redisPods)).toBe(false);
    expect(
      rendered.get('in-chart Redis without persistence, everything off, fixed replicas')!.some((o) => o.kind === 'NetworkPolicy'),
    ).toBe(false);
  });
});

describe('Service, Ingress, PDB, HPA', () => {
  test('the Service has no session affinity (kube-proxy would pin every client of an ingress pod to one hub)', () => {
    for (const objects of rendered.values()) {
      const service = one(objects, 'Service', FULLNAME).spec;
      expect(service.sessionAffinity).toBeUndefined();
      expect(service.ports).toEqual([{ name: 'http', port: 80, targetPort: 'http', protocol: 'TCP' }]);
    }
  });

  test('the Ingress is ingress-nginx with long timeouts, hashing by client address, no cookie affinity', () => {
    const ingress = one(allOn, 'Ingress');
    expect(ingress.spec.ingressClassName).toBe('nginx');
    const annotations = ingress.metadata.annotations!;
    expect(Number(annotations['nginx.ingress.kubernetes.io/proxy-read-timeout'])).toBeGreaterThanOrEqual(3600);
    expect(Number(annotations['nginx.ingress.kubernetes.io/proxy-send-timeout'])).toBeGreaterThanOrEqual(3600);
    expect(annotations['nginx.ingress.kubernetes.io/upstream-hash-by']).toBe('$remote_addr');
    expect(Object.keys(annotations).filter((k) => /affinity|session-cookie/.test(k))).toEqual([]);
    expect(ingress.spec.tls).toEqual([{ secretName: 'relay-hub-tls', hosts: ['relay-hub.example.com'] }]);
    expect(ingress.spec.rules[0].http.paths[0].backend).toEqual({ service: { name: FULLNAME, port: { name: 'http' } } });
  });

  test('PDB takes replicas one at a time; HPA scales the Deployment on CPU, down slowly; replicas fixed without it', () => {
    expect(one(defaults, 'PodDisruptionBudget').spec).toEqual({
      maxUnavailable: 1,
      selector: { matchLabels: one(defaults, 'Deployment').spec.selector.matchLabels },
    });
    const hpa = one(defaults, 'HorizontalPodAutoscaler').spec;
    expect(hpa.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: FULLNAME });
    expect(hpa).toMatchObject({ minReplicas: 3, maxReplicas: 10 });
    expect(hpa.behavior.scaleDown.policies).toEqual([{ type: 'Pods', value: 1, periodSeconds: 60 }]);
    expect(one(defaults, 'Deployment').spec.replicas).toBeUndefined();
    const fixed = rendered.get('in-chart Redis without persistence, everything off, fixed replicas')!;
    expect(one(fixed, 'Deployment').spec.replicas).toBe(2);
    expect(fixed.map((o) => o.kind).filter((k) => ['HorizontalPodAutoscaler', 'PodDisruptionBudget', 'Ingress'].includes(k))).toEqual([]);
    expect(one(defaults, 'Deployment').spec.strategy).toEqual({ type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } });
  });
});

describe('monitoring', () => {
  test('off by default: no ServiceMonitor, PrometheusRule or dashboard', () => {
    expect(defaults.map((o) => o.kind).filter((k) => ['ServiceMonitor', 'PrometheusRule'].includes(k))).toEqual([]);
    expect(defaults.filter((o) => o.kind === 'ConfigMap').map((o) => o.metadata.name)).toEqual([FULLNAME]);
  });

  test('the ServiceMonitor scrapes the http port as job relay-hub, with the hub labels winning, and the token when needed', () => {
    const monitor = one(allOn, 'ServiceMonitor').spec;
    const service = one(allOn, 'Service', FULLNAME);
    expect(Object.entries(monitor.selector.matchLabels).every(([k, v]) => service.metadata.labels?.[k] === v)).toBe(true);
    const [endpoint] = monitor.endpoints;
    expect(endpoint).toMatchObject({ port: 'http', path: '/metrics', interval: '30s', scrapeTimeout: '10s', honorLabels: true });
    expect(endpoint.relabelings).toEqual([{ targetLabel: 'job', replacement: 'relay-hub' }]);
    expect(endpoint.authorization).toEqual({ type: 'Bearer', credentials: { name: FULLNAME, key: 'METRICS_TOKEN' } });
    const withoutToken = one(rendered.get('in-chart Redis with existingSecret, monitoring on')!, 'ServiceMonitor').spec.endpoints[0];
    expect(withoutToken.authorization).toBeUndefined();
    const fromExisting = one(
      rendered.get('Redis Cluster with existingSecret, HPA off, monitoring on with sendMetricsToken')!,
      'ServiceMonitor',
    );
    expect(fromExisting.spec.endpoints[0].authorization.credentials).toEqual({ name: 'relay-hub-secrets', key: 'METRICS_TOKEN' });
  });

  test('the PrometheusRule is files/relay-hub.rules.yml as it is', () => {
    const source = parse(readFileSync(join(ROOT, 'helm', 'relay-hub', 'files', 'relay-hub.rules.yml'), 'utf8')) as Values;
    expect(one(allOn, 'PrometheusRule').spec).toEqual(source);
  });

  test('the dashboard ConfigMap carries the sidecar label and files/relay-hub-dashboard.json as it is', () => {
    const dashboard = one(allOn, 'ConfigMap', `${FULLNAME}-dashboard`);
    expect(dashboard.metadata.labels).toMatchObject({ grafana_dashboard: '1' });
    const source = readFileSync(join(ROOT, 'helm', 'relay-hub', 'files', 'relay-hub-dashboard.json'), 'utf8');
    expect(JSON.parse(dashboard.data['relay-hub.json'])).toEqual(JSON.parse(source));
  });
});
