// The alert rules and the dashboard against a running hub: every metric name their PromQL uses is one
// the hub's /metrics exports (a renamed metric would leave an alert that never fires and a panel that
// stays empty), every label a selector names is one that metric has, and every metric the hub exports
// is on the dashboard or listed below as deliberately left out. The hub runs in-process on a real
// Redis (the cluster mode registers the pub/sub metrics), with some traffic so that labelled series
// exist too.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { Events } from '../../src/protocol';
import { clientSocket, refusal, startHub, type TestHub } from '../helpers/hub';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { ROOT } from './support/chart';

const RULES_FILE = 'helm/relay-hub/files/relay-hub.rules.yml';
const DASHBOARD_FILE = 'helm/relay-hub/files/relay-hub-dashboard.json';

/** Series Prometheus itself records for every target; no exporter has them. */
const RECORDED_BY_PROMETHEUS = new Set(['up']);

/**
 * Metrics the hub exports that the dashboard deliberately does not show, each with the reason. A new
 * metric goes on the dashboard, or here with a reason: the test below says which.
 */
const LEFT_OUT: Record<string, string> = {
  process_cpu_user_seconds_total: 'process_cpu_seconds_total is their sum, on the CPU panel',
  process_cpu_system_seconds_total: 'process_cpu_seconds_total is their sum, on the CPU panel',
  process_start_time_seconds: 'restarts show as gaps and in the unready alert; kube-state-metrics counts them',
  process_virtual_memory_bytes: 'virtual size says nothing about the memory limit; RSS does',
  process_heap_bytes: 'the V8 heap panel shows used and committed heap',
  process_open_fds: 'one per socket: the connections panels show the same',
  process_max_fds: 'a constant of the container',
  nodejs_eventloop_lag_seconds: 'a single sample per scrape; the p50/p99/max of the histogram are shown',
  nodejs_eventloop_lag_min_seconds: 'the low end of the lag histogram says nothing about latency',
  nodejs_eventloop_lag_mean_seconds: 'p50 and p99 are shown; the mean hides the tail',
  nodejs_eventloop_lag_stddev_seconds: 'p50 and p99 are shown',
  nodejs_eventloop_lag_p90_seconds: 'p50, p99 and max are shown',
  nodejs_active_resources: 'per resource type; the handles total is shown',
  nodejs_active_resources_total: 'the handles total is shown',
  nodejs_active_handles: 'per handle type; the total is shown',
  nodejs_active_requests: 'per request type; the total is shown',
  nodejs_heap_space_size_total_bytes: 'per V8 space; the heap totals are shown',
  nodejs_heap_space_size_used_bytes: 'per V8 space; the heap totals are shown',
  nodejs_heap_space_size_available_bytes: 'per V8 space; the heap totals are shown',
  nodejs_version_info: 'a constant of the image',
  relay_redis_subscription_recovery_seconds:
    'rare, one per Redis failover; each is logged with its duration, and relay_redis_subscription_gap is on the Ready replicas panel while one lasts',
};

interface Family {
  type: string;
  /** The series names the family produces (histograms: _bucket, _sum, _count). */
  series: string[];
}

/** Metric families of a /metrics scrape (Prometheus text format), by name. */
function families(text: string): Map<string, Family> {
  const out = new Map<string, Family>();
  for (const [, name, type] of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    const suffixes = type === 'histogram' ? ['_bucket', '_sum', '_count'] : type === 'summary' ? ['', '_sum', '_count'] : [''];
    out.set(name, { type, series: suffixes.map((s) => name + s) });
  }
  return out;
}

// Aggregation operators may stand before their `by (…)`, away from their parenthesis.
const KEYWORDS = new Set(
  'by without on ignoring group_left group_right bool and or unless offset sum avg min max count group stddev stdvar topk bottomk quantile count_values'.split(
    ' ',
  ),
);

/** The metric names a PromQL expression selects, each with the label names its matchers use. */
function selectors(expr: string): { metric: string; labels: string[] }[] {
  const text = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'/g, '""') // string literals
    .replace(/\$\{?\w+\}?/g, '0') // Grafana variables ($__rate_interval, ${datasource})
    .replace(/\[[^\]]*\]/g, ' ') // range and subquery durations
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' $1 '); // label lists
  const found: { metric: string; labels: string[] }[] = [];
  for (const m of text.matchAll(/(?<![\w.:])([a-zA-Z_:][\w:]*)\s*(\{[^}]*\})?(\s*\()?/g)) {
    const [, name, matchers, call] = m;
    if (call && !matchers) continue; // a function or an aggregation
    if (KEYWORDS.has(name)) continue;
    const labels = [...(matchers ?? '').matchAll(/([a-zA-Z_]\w*)\s*(?:=~|!~|!=|=)/g)].map((l) => l[1]);
    found.push({ metric: name, labels });
  }
  return found;
}

type Use = { metric: string; labels: string[]; where: string };

function ruleUses(): Use[] {
  const rules = parse(readFileSync(join(ROOT, RULES_FILE), 'utf8')) as { groups: { rules: { alert: string; expr: string }[] }[] };
  return rules.groups.flatMap((g) => g.rules.flatMap((r) => selectors(r.expr).map((s) => ({ ...s, where: `rule ${r.alert}` }))));
}

type Panel = { title?: string; panels?: Panel[]; targets?: { expr?: string }[] };
function dashboardUses(): Use[] {
  const dashboard = JSON.parse(readFileSync(join(ROOT, DASHBOARD_FILE), 'utf8')) as {
    panels: Panel[];
    templating: { list: { name: string; definition?: string }[] };
  };
  const panels = (list: Panel[]): Panel[] => list.flatMap((p) => [p, ...panels(p.panels ?? [])]);
  const uses: Use[] = [];
  for (const panel of panels(dashboard.panels)) {
    for (const target of panel.targets ?? []) {
      for (const s of selectors(target.expr ?? '')) uses.push({ ...s, where: `dashboard panel "${panel.title}"` });
    }
  }
  for (const variable of dashboard.templating.list) {
    const query = /label_values\((.*),\s*\w+\)$/.exec(variable.definition ?? '')?.[1];
    if (query) for (const s of selectors(query)) uses.push({ ...s, where: `dashboard variable $${variable.name}` });
  }
  return uses;
}

let redis: TestRedis;
let t: TestHub;
let exported: Map<string, Family>;
let labelNames: Map<string, string[]>;

beforeAll(async () => {
  redis = await startRedis();
  t = await startHub({ REDIS_URL: redis.url });
  // Traffic, so labelled series exist: a runtime, a client, a relayed message and its reply, a refusal.
  const agent = await t.agent('bot');
  agent.onMessage(async (m) => {
    await agent.reply(m.from, 'pong');
  });
  const client = await t.client('bot', { sub: 'metered' });
  const pong = new Promise((resolve) => client.once(Events.message, resolve));
  expect((await client.timeout(5000).emitWithAck(Events.message, { clientMessageId: 'm1', text: 'ping' })).ok).toBe(true);
  await pong;
  expect((await refusal(clientSocket(t.url, { token: 'nope', agentId: 'bot' }))).code).toBe('TOKEN_INVALID');
  const response = await fetch(`${t.url}/metrics`);
  expect(response.status).toBe(200);
  exported = families(await response.text());
  labelNames = new Map(
    (await t.hub.metrics.registry.getMetricsAsJSON()).map((m) => [
      m.name,
      [...((t.hub.metrics.registry.getSingleMetric(m.name) as unknown as { labelNames?: string[] }).labelNames ?? [])],
    ]),
  );
});

afterAll(async () => {
  await t?.close();
  await redis?.close();
});

test('the PromQL reader finds metric names and matcher labels, and skips functions, keywords and label lists', () => {
  expect(
    selectors(
      'sum by (job, le) (rate(a_bucket{job="x",kind=~"y|z"}[5m])) / on (job) group_left sum(b) > 0.1 and c{d!="e"} or histogram_quantile(0.9, f[${__rate_interval}])',
    ),
  ).toEqual([
    { metric: 'a_bucket', labels: ['job', 'kind'] },
    { metric: 'b', labels: [] },
    { metric: 'c', labels: ['d'] },
    { metric: 'f', labels: [] },
  ]);
});

test('every metric the alert rules and the dashboard use is exported by a running hub', () => {
  const series = new Set([...exported.values()].flatMap((f) => f.series));
  const uses = [...ruleUses(), ...dashboardUses()];
  expect(uses.length).toBeGreaterThan(50);
  const unknown = uses
    .filter((u) => !series.has(u.metric) && !RECORDED_BY_PROMETHEUS.has(u.metric))
    .map(
      (u) =>
        `${u.where} uses ${u.metric}, which the hub's /metrics does not export (renamed or removed? update ${u.where.startsWith('rule') ? RULES_FILE : DASHBOARD_FILE})`,
    );
  expect([...new Set(unknown)]).toEqual([]);
});

test('every label a selector of the rules or the dashboard matches on is a label of that metric', () => {
  const familyOf = (metric: string) => [...exported].find(([, f]) => f.series.includes(metric))?.[0];
  const wrong = [...ruleUses(), ...dashboardUses()].flatMap((u) => {
    const family = familyOf(u.metric);
    if (!family) return [];
    // Prometheus adds job and instance to every series; histograms have le.
    const known = new Set([...(labelNames.get(family) ?? []), 'job', 'instance', 'le']);
    return u.labels.filter((l) => !known.has(l)).map((l) => `${u.where}: ${u.metric} has no label ${l}`);
  });
  expect([...new Set(wrong)]).toEqual([]);
});

test('every metric the hub exports is on the dashboard or deliberately left out', () => {
  const shown = new Set(dashboardUses().map((u) => u.metric));
  const missing = [...exported]
    .filter(([name, f]) => !f.series.some((s) => shown.has(s)) && !(name in LEFT_OUT))
    .map(
      ([name]) =>
        `${name} is exported by the hub but not on the dashboard: add a panel for it to ${DASHBOARD_FILE}, ` +
        `or, if it does not belong there, add it with the reason to LEFT_OUT in test/ops/metric-names.test.ts`,
    );
  expect(missing).toEqual([]);
  // The list stays true: what it names is exported, and not shown after all.
  expect(Object.keys(LEFT_OUT).filter((name) => !exported.has(name))).toEqual([]);
  expect(Object.keys(LEFT_OUT).filter((name) => exported.get(name)!.series.some((s) => shown.has(s)))).toEqual([]);
});

test('the dashboard has a row for each thing an operator watches, each panel with a query and a description', () => {
  const dashboard = JSON.parse(readFileSync(join(ROOT, DASHBOARD_FILE), 'utf8')) as {
    uid: string;
    panels: (Panel & { type: string; description?: string })[];
    templating: { list: { name: string; type: string }[] };
  };
  expect(dashboard.uid).toBe('relay-hub');
  expect(dashboard.panels.filter((p) => p.type === 'row').map((p) => p.title)).toEqual([
    'Replicas',
    'Connections',
    'Handshakes and refusals',
    'Messages and acks',
    'Latency',
    'Conversation log',
    'Recovery',
    'Streams',
    'Redis',
    'Event loop',
    'Memory',
    'Handoff',
  ]);
  const panels = dashboard.panels.filter((p) => p.type !== 'row');
  expect(panels.filter((p) => !p.description || (p.targets ?? []).length === 0).map((p) => p.title)).toEqual([]);
  // Any Prometheus data source, chosen in Grafana: no data source uid is baked in.
  expect(dashboard.templating.list.map((v) => [v.name, v.type])).toEqual([
    ['datasource', 'datasource'],
    ['instance', 'query'],
  ]);
  expect(JSON.stringify(panels.flatMap((p) => p.targets))).not.toMatch(/"uid":"(?!\$\{datasource\})/);
});
