// `docker compose --profile monitoring up`: the shipped stack plus Prometheus (a local stand-in for
// prom/prometheus built from Debian's `prometheus` package, scripts/containers/stand-ins.sh). Prometheus
// scrapes the three hubs directly on the compose network, with the METRICS_TOKEN the hubs require,
// and evaluates the alert rules the Helm chart ships (helm/relay-hub/files/relay-hub.rules.yml): all
// three targets up, the rules loaded and evaluated, and an alert going pending when a hub stops.
import { execFileSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { hubSecrets } from './support/peers';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { DockerComposeEnvironment, Wait, type StartedDockerComposeEnvironment } from 'testcontainers';
import { parse } from 'yaml';
import { COMPOSE_PROJECT_PREFIX } from './support/docker-env';
import { COMPOSE_FILE, ROOT } from './support/paths';
import { waitFor } from '../helpers/wait';

const HUBS = ['hub-1', 'hub-2', 'hub-3'];
const TARGETS = HUBS.map((h) => `${h}:3000`);
const RULES = parse(readFileSync(join(ROOT, 'helm', 'relay-hub', 'files', 'relay-hub.rules.yml'), 'utf8')) as {
  groups: { name: string; rules: { alert: string }[] }[];
};

async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

type Target = { labels: { job: string; instance: string }; health: string; lastError: string };
type RuleGroup = { name: string; file: string; rules: { name: string; health: string; lastEvaluation: string; state: string }[] };
type Alert = { labels: Record<string, string>; state: string };

describe('docker compose --profile monitoring up', () => {
  const project = `${COMPOSE_PROJECT_PREFIX}${randomUUID().slice(0, 8)}`;
  const env: Record<string, string> = {
    ...hubSecrets(),
    // Set, so the hubs refuse a scrape without it and Prometheus must send it.
    METRICS_TOKEN: randomBytes(32).toString('hex'),
  };
  let stack: StartedDockerComposeEnvironment;
  let prometheus: string;

  const api = async <T>(path: string): Promise<T> => {
    const response = await fetch(`${prometheus}/api/v1/${path}`);
    expect(response.status).toBe(200);
    return ((await response.json()) as { data: T }).data;
  };

  beforeAll(async () => {
    env.RELAY_HUB_PORT = String(await freePort());
    env.PROMETHEUS_PORT = String(await freePort());
    prometheus = `http://127.0.0.1:${env.PROMETHEUS_PORT}`;
    let waiting = new DockerComposeEnvironment(ROOT, COMPOSE_FILE)
      .withProjectName(project)
      .withProfiles('monitoring')
      .withEnvironment(env)
      .withStartupTimeout(120_000)
      .withWaitStrategy('redis-1', Wait.forHealthCheck())
      .withWaitStrategy('prometheus-1', Wait.forHttp('/-/ready', 9090));
    for (const hub of HUBS) waiting = waiting.withWaitStrategy(`${hub}-1`, Wait.forHealthCheck());
    stack = await waiting.up();
  });

  afterAll(async () => {
    await stack?.down({ removeVolumes: true, timeout: 0 });
  });

  test('the hubs want the token: nginx keeps /metrics to itself, and a hub refuses a scrape without it', async () => {
    const throughNginx = await fetch(`http://127.0.0.1:${env.RELAY_HUB_PORT}/metrics`);
    expect(throughNginx.status).toBe(403);
    const hub = execFileSync('docker', ['compose', '-p', project, '-f', COMPOSE_FILE, 'ps', '-q', 'hub-1'], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      encoding: 'utf8',
    }).trim();
    const status = execFileSync(
      'docker',
      ['exec', hub, 'node', '-e', "fetch('http://127.0.0.1:3000/metrics').then((r) => console.log(r.status))"],
      { encoding: 'utf8' },
    ).trim();
    expect(status).toBe('401');
  });

  test('Prometheus scrapes all three hubs directly, as job relay-hub', async () => {
    const up = await waitFor(
      async () => {
        const { activeTargets } = await api<{ activeTargets: Target[] }>('targets');
        return activeTargets.length === 3 && activeTargets.every((t) => t.health === 'up') ? activeTargets : undefined;
      },
      90_000,
      'three targets up',
      1000,
    );
    expect(
      up
        .map((t) => ({ job: t.labels.job, instance: t.labels.instance, lastError: t.lastError }))
        .sort((a, b) => a.instance.localeCompare(b.instance)),
    ).toEqual(TARGETS.map((instance) => ({ job: 'relay-hub', instance, lastError: '' })));
    const ready = await api<{ result: { metric: { instance: string }; value: [number, string] }[] }>(
      `query?query=${encodeURIComponent('relay_ready{job="relay-hub"}')}`,
    );
    expect(ready.result.map((r) => [r.metric.instance, r.value[1]]).sort()).toEqual(TARGETS.map((t) => [t, '1']));
  });

  test("the chart's rules are loaded and evaluated", async () => {
    const groups = await waitFor(
      async () => {
        const data = await api<{ groups: RuleGroup[] }>('rules');
        return data.groups.length > 0 && data.groups.every((g) => g.rules.every((r) => !r.lastEvaluation.startsWith('0001-')))
          ? data.groups
          : undefined;
      },
      90_000,
      'the rules evaluated',
      1000,
    );
    expect(groups.map((g) => ({ name: g.name, file: g.file }))).toEqual([
      { name: 'relay-hub', file: '/etc/prometheus/rules/relay-hub.rules.yml' },
    ]);
    const rules = groups[0].rules;
    expect(rules.map((r) => r.name)).toEqual(RULES.groups[0].rules.map((r) => r.alert));
    expect(rules.filter((r) => r.health !== 'ok')).toEqual([]);
    // A healthy stack: nothing pending or firing.
    expect(rules.filter((r) => r.state !== 'inactive').map((r) => r.name)).toEqual([]);
  });

  test('a stopped hub makes RelayHubReplicaUnready pending for it', async () => {
    execFileSync('docker', ['compose', '-p', project, '-f', COMPOSE_FILE, 'stop', '-t', '0', 'hub-3'], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: 'ignore',
    });
    const alert = await waitFor(
      async () => {
        const { alerts } = await api<{ alerts: Alert[] }>('alerts');
        return alerts.find((a) => a.labels.alertname === 'RelayHubReplicaUnready');
      },
      90_000,
      'RelayHubReplicaUnready pending',
      1000,
    );
    expect(alert).toMatchObject({ state: 'pending', labels: { instance: 'hub-3:3000', job: 'relay-hub', severity: 'warning' } });
  });
});
