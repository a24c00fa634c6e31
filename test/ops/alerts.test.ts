// The alert rules (helm/relay-hub/files/relay-hub.rules.yml) as the chart renders them into its
// PrometheusRule: `promtool check rules`, `promtool test rules` with test/ops/alerts.promtool.yml
// (series that make each alert fire and series that must leave it silent), and a mutation check
// that each alert's cases really depend on its expression. Every alert has a summary, a description
// and a runbook section in docs/monitoring.md.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { eachLimited, EVERYTHING_ON, one, render, ROOT } from './support/chart';
import { promtool, scratchFile } from './support/promtool';

interface Rule {
  alert: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
type RuleFile = { groups: { name: string; rules: Rule[] }[] };
interface UnitTests {
  rule_files: string[];
  tests: { name: string; alert_rule_test: { alertname: string; exp_alerts: unknown[] }[] }[];
}

const UNIT_TESTS = join(ROOT, 'test', 'ops', 'alerts.promtool.yml');
const RUNBOOKS = join(ROOT, 'docs', 'monitoring.md');

let rendered: RuleFile;
let rulesFile: string;
let alerts: Rule[];

/** The unit tests (those of `alert` only, when given) pointed at `rules`, the rendered rules or a mutated copy. */
function unitTestsFor(rules: string, alert?: string): string {
  const unit = parse(readFileSync(UNIT_TESTS, 'utf8')) as UnitTests;
  const tests = alert ? unit.tests.filter((t) => t.alert_rule_test.some((a) => a.alertname === alert)) : unit.tests;
  return scratchFile('alerts.promtool.yml', { ...unit, rule_files: [rules], tests });
}

beforeAll(async () => {
  rendered = one(await render(EVERYTHING_ON), 'PrometheusRule').spec as RuleFile;
  rulesFile = scratchFile('relay-hub.rules.yml', rendered);
  alerts = rendered.groups.flatMap((g) => g.rules);
});

test('promtool check rules accepts the rules as the chart renders them', async () => {
  const result = await promtool(['check', 'rules', rulesFile]);
  expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
  expect(result.stdout).toContain(`SUCCESS: ${alerts.length} rules found`);
});

test('promtool test rules: every case passes against the rendered rules', async () => {
  const result = await promtool(['test', 'rules', unitTestsFor(rulesFile)]);
  expect({ code: result.code, output: result.stdout + result.stderr }).toEqual({ code: 0, output: expect.stringContaining('SUCCESS') });
});

test('every alert has a case where it fires and one where it stays silent', () => {
  const tests = (parse(readFileSync(UNIT_TESTS, 'utf8')) as UnitTests).tests.flatMap((t) => t.alert_rule_test);
  const coverage = alerts.map(({ alert }) => ({
    alert,
    fires: tests.some((t) => t.alertname === alert && t.exp_alerts.length > 0),
    silent: tests.some((t) => t.alertname === alert && t.exp_alerts.length === 0),
  }));
  expect(coverage).toEqual(alerts.map(({ alert }) => ({ alert, fires: true, silent: true })));
});

test.each([
  ['never fires', 'vector(0) > 1', 'its firing case fails'],
  ['always fires', 'vector(1)', 'its silent case fails'],
])("each alert's cases depend on its expression: an expression that %s makes promtool fail (%s)", async (_what, expr) => {
  const undetected = await eachLimited(alerts, 2, async ({ alert }) => {
    const mutated = structuredClone(rendered);
    for (const rule of mutated.groups.flatMap((g) => g.rules)) if (rule.alert === alert) rule.expr = expr;
    const result = await promtool(['test', 'rules', unitTestsFor(scratchFile('mutated.rules.yml', mutated), alert)]);
    return result.code === 0 || !(result.stdout + result.stderr).includes(`alertname: ${alert},`) ? alert : null;
  });
  expect(undetected.filter(Boolean)).toEqual([]);
});

test('every alert has a severity, a summary, a description and a runbook section in docs/monitoring.md', () => {
  const docs = readFileSync(RUNBOOKS, 'utf8');
  // GitHub's anchors of the level-3 headings: lower case, spaces to dashes, punctuation dropped.
  const anchors = new Set(
    [...docs.matchAll(/^### (.+)$/gm)].map((m) =>
      m[1]
        .trim()
        .toLowerCase()
        .replace(/[^\w\- ]/g, '')
        .replace(/ /g, '-'),
    ),
  );
  for (const rule of alerts) {
    expect({ alert: rule.alert, severity: rule.labels?.severity }).toEqual({
      alert: rule.alert,
      severity: expect.stringMatching(/^(warning|critical)$/),
    });
    expect(Object.keys(rule.annotations ?? {}).sort()).toEqual(['description', 'runbook_url', 'summary']);
    const [file, anchor] = rule.annotations!.runbook_url.split('#');
    expect({ alert: rule.alert, file }).toEqual({ alert: rule.alert, file: 'docs/monitoring.md' });
    expect({ alert: rule.alert, anchor, documented: anchors.has(anchor) }).toEqual({ alert: rule.alert, anchor, documented: true });
  }
});

test("compose's Prometheus (deploy/prometheus.yml) is a valid config that loads the same rules file", async () => {
  // As the container sees it: the token file its entrypoint writes, the rules file mounted into rules/.
  const config = parse(readFileSync(join(ROOT, 'deploy', 'prometheus.yml'), 'utf8')) as {
    rule_files: string[];
    scrape_configs: { job_name: string; authorization: { credentials_file: string }; static_configs: { targets: string[] }[] }[];
  };
  expect(config.rule_files).toEqual(['/etc/prometheus/rules/*.yml']);
  const [job] = config.scrape_configs;
  expect(job.job_name).toBe('relay-hub');
  expect(job.static_configs[0].targets).toEqual(['hub-1:3000', 'hub-2:3000', 'hub-3:3000']);
  job.authorization.credentials_file = scratchFile('metrics-token', '');
  config.rule_files = [join(ROOT, 'helm', 'relay-hub', 'files', 'relay-hub.rules.yml')];
  const result = await promtool(['check', 'config', scratchFile('prometheus.yml', config)]);
  expect({ code: result.code, output: result.stdout + result.stderr }).toEqual({
    code: 0,
    output: expect.stringContaining(`SUCCESS: ${alerts.length} rules found`),
  });
});
