// The report of `npm run bench` (bench/run.mjs): the table of hub ÷ baseline ratios against the
// targets, the conversation log's table, the tables the other phases write (streaming.mjs,
// allocation.mjs, widget.mjs, scale-rows.mjs), how it all was measured, and the copy of a full run's
// report in docs/benchmarks.md. `ctx` is run.mjs's toolbox: the figures are in ctx.results.
import { readFileSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { allocationTable } from './allocation.mjs';
import { scaleRows } from './scale-rows.mjs';
import { streamingTable } from './streaming.mjs';
import { widgetTable } from './widget.mjs';

const format = (v, digits = 0) => (v === undefined ? 'n/a' : Number.isFinite(v) ? v.toFixed(digits) : '∞');

/**
 * Rows of a two-column comparison (`a` against `b`, e.g. hub against baseline): `row` writes one
 * with its cells as given, `ratioRow` one of `a[key] ÷ b[key]` judged by `test`.
 */
function comparisonRows(a, b) {
  const rows = [];
  const verdict = (ok) => (ok === undefined ? '—' : ok ? 'pass' : '**FAIL**');
  const row = (metric, x, y, r, target, ok) => rows.push(`| ${metric} | ${x} | ${y} | ${r} | ${target} | ${verdict(ok)} |`);
  const ratioRow = (metric, key, digits, target, test) => {
    const r = a[key] === undefined || b[key] === undefined || !b[key] ? undefined : a[key] / b[key];
    row(
      metric,
      format(a[key], digits),
      format(b[key], digits),
      r === undefined ? 'n/a' : r.toFixed(2),
      target,
      r === undefined || !test ? undefined : test(r),
    );
  };
  return { rows, row, ratioRow };
}

/** The latency rows every comparison has. */
function latencyRows(ratioRow, load) {
  ratioRow(`p50 round trip (ms) at ${load.offeredPerS}/s, 1 replica`, 'p50', 2, '—');
  ratioRow(`p99 round trip (ms) at ${load.offeredPerS}/s, 1 replica`, 'p99', 2, '≤ 1.25', (r) => r <= 1.25);
  ratioRow(`p50 round trip (ms) at ${load.offeredPerS}/s, 2 replicas`, 'p50c', 2, '—');
  ratioRow(`p99 round trip (ms) at ${load.offeredPerS}/s, 2 replicas`, 'p99c', 2, '≤ 1.25', (r) => r <= 1.25);
}

/** The conversation log's cost (docs/benchmarks.md): at most 15 % of throughput, at most 1.25× p99. */
function historyTable({ results, load }) {
  const on = results.logOn;
  if (on.rt1 === undefined && on.rt2 === undefined) return '';
  const { rows, ratioRow } = comparisonRows(on, results.logOff);
  ratioRow('Relay round trips/s, 1 replica (in-memory log)', 'rt1', 0, '≥ 0.85', (r) => r >= 0.85);
  ratioRow('Relay round trips/s, 2 replicas (Redis Streams log)', 'rt2', 0, '≥ 0.85', (r) => r >= 0.85);
  latencyRows(ratioRow, load);
  const storm =
    on.recoverySeconds === undefined
      ? []
      : [
          `| Recovery storm: s until all ${load.recoveryStorm} clients reconnecting at once with lastMessageId have their ${load.recoveryMissed} missed replies (2 replicas) | ${format(on.recoverySeconds, 2)} | — | — | — | ${on.recoveryBack === load.recoveryStorm && on.notRecovered === 0 && on.doubled === 0 ? 'all recovered, none doubled' : `**${on.recoveryBack} back, ${on.notRecovered} not recovered, ${on.doubled} doubled**`} |`,
        ];
  return [
    '| metric (conversation log) | log on | log off | on ÷ off | target | result |',
    '|---|---|---|---|---|---|',
    ...rows,
    ...storm,
  ].join('\n');
}

/** The hub against the minimal relay; throughput targets of the hot-path issue (≥ 0.9× one replica, ≥ 1.1× two). */
function relayTable({ results, load }, phases) {
  // A scale-only run (minutes long, run by hand) reports its own rows and nothing else.
  if (phases.size === 1 && results.scale) {
    return [
      '| metric | hub | baseline | hub ÷ baseline | target | result |',
      '|---|---|---|---|---|---|',
      ...scaleRows(results.scale),
    ].join('\n');
  }
  const h = results.hub;
  const b = results.baseline;
  const f = format;
  const { rows, row, ratioRow } = comparisonRows(h, b);
  const ratio = (x, y) => (x === undefined || y === undefined || !y ? undefined : x / y);
  ratioRow('Relay round trips/s, 1 replica (client → agent → client)', 'rt1', 0, '≥ 0.9', (r) => r >= 0.9);
  ratioRow('Relay round trips/s, 2 replicas over Redis', 'rt2', 0, '≥ 1.1', (r) => r >= 1.1);
  latencyRows(ratioRow, load);
  ratioRow('Server CPU per round trip (ms), 1 replica', 'cpuPerRt1', 3, '—');
  ratioRow('Server CPU per round trip (ms), 2 replicas (sum)', 'cpuPerRt2', 3, '—');
  ratioRow("Redis CPU per round trip (ms), 2 replicas (the redis-server both share, in each side's slices)", 'redisCpuPerRt2', 3, '—');
  ratioRow('Allocated per round trip (KB on the V8 heap, collected included), 1 replica', 'kbPerRt1', 1, '—');
  ratioRow('Allocated per round trip (KB), 2 replicas (sum)', 'kbPerRt2', 1, '—');
  const kib = (v) => (v === undefined ? undefined : v / 1024);
  const mem = ratio(h.bytesPerIdle, b.bytesPerIdle);
  row(
    `Memory per idle client connection (KiB, retained RSS delta over ${load.idle})`,
    f(kib(h.bytesPerIdle), 1),
    f(kib(b.bytesPerIdle), 1),
    mem === undefined ? 'n/a' : mem.toFixed(2),
    '≤ 20 KB (hub)',
    h.bytesPerIdle === undefined ? undefined : h.bytesPerIdle <= 20 * 1000,
  );
  const memGc = ratio(h.bytesPerIdleAfterGc, b.bytesPerIdleAfterGc);
  row(
    `… the same after a plain gc(), young generation grown by the connect burst included`,
    f(kib(h.bytesPerIdleAfterGc), 1),
    f(kib(b.bytesPerIdleAfterGc), 1),
    memGc === undefined ? 'n/a' : memGc.toFixed(2),
    '—',
  );
  ratioRow('Handshakes/s (both verify a JWT)', 'handshakes', 0, '—');
  ratioRow(`Reconnect storm: s until all ${load.storm} dropped clients are back`, 'stormSeconds', 2, '—');
  row(
    `Concurrent clients on one replica (round trips/s alongside)`,
    h.concurrent === undefined ? 'n/a' : `${h.concurrent} (${f(h.concurrentProbe)})`,
    b.concurrent === undefined ? 'n/a' : `${b.concurrent} (${f(b.concurrentProbe)})`,
    '—',
    `${load.concurrent.toLocaleString('en-US')} on 2 cores`,
    h.concurrent === undefined ? undefined : h.concurrent >= load.concurrent && h.concurrentProbe > 0,
  );
  if (results.scale) rows.push(...scaleRows(results.scale));
  return ['| metric | hub | baseline | hub ÷ baseline | target | result |', '|---|---|---|---|---|---|', ...rows].join('\n');
}

/** The whole report in markdown, headed by the run's start, its command and the machine. */
export function benchReport(ctx, { started, command, args, phases }) {
  const pkg = JSON.parse(readFileSync(join(ctx.root, 'package.json'), 'utf8'));
  const cpu = cpus();
  return [
    `## relay-hub bench, ${started.toISOString()}`,
    '',
    `Command: \`${command}\` (relay-hub ${pkg.version}, Node ${process.version}, ${cpu.length} × ${cpu[0]?.model.trim()}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB)`,
    '',
    ...(args.versus ? [`**The baseline column is another build of the hub, \`${args.versus}\`: the targets do not apply.**`, ''] : []),
    relayTable(ctx, phases),
    '',
    historyTable(ctx),
    '',
    ctx.results.streaming ? streamingTable(ctx.results.streaming, { comparisonRows, format }) : '',
    '',
    ctx.results.allocation ? allocationTable(ctx.results.allocation) : '',
    '',
    ctx.results.widget ? widgetTable(ctx.results.widget) : '',
    '',
    `Load: ${ctx.agentIds.length} agent runtimes and ${ctx.load.clients} websocket clients per server in one generator process. Hub and ` +
      `baseline run side by side and are measured in alternating slices (${ctx.rounds} each, order swapped every round) so other load on the ` +
      `machine falls on both alike; throughput and latency percentiles are the median over slices (the log shows each slice's p99 and the pooled one). Closed loop = one ` +
      `message in flight per client, ${ctx.warmupMs / 2000} s warm-up then ${ctx.windowMs / 2000} s measured per slice; open loop = ${ctx.load.offeredPerS} ` +
      `messages/s offered for ${ctx.windowMs / 2000} s per slice. CPU = user + system time of the server process(es) over the slice, warm-up included; allocated = bytes allocated on their V8 heaps over the same slice (GC profiler, bench/gc-signal.cjs). A round trip is client \`message\` → agent (acks, replies) → the reply reaches the client. ` +
      `Two replicas: runtimes on one, clients on the other, private redis-server, ${args.adapter ?? 'sharded'} Redis adapter for the baseline ` +
      `(the hub uses its own cluster configuration). Idle clients, the 10,000 (over two generator processes) and the storm clients are ` +
      `websocket clients of /ws/client; memory per idle client is the server's RSS growth over ${ctx.load.idle} of them (the clients live in ` +
      `another process), read after V8's memory-reducing full GC in both servers; after a plain gc() the RSS also holds the young ` +
      `generation as the connect burst grew it (committed, empty, bounded, not growing with connections), shown on the next row. ` +
      `The storm drops every TCP connection at once and clients reconnect with socket.io-client's ` +
      `default backoff (1–5 s, randomized). Everything shares one machine with the generators, so absolute numbers are machine-bound; ` +
      `the ratios compare like with like.`,
    '',
  ].join('\n');
}

/** The report of a full run replaces the "Latest results" of docs/benchmarks.md (its heading one level down). */
export function recordInDocs(ctx, report) {
  const file = join(ctx.root, 'docs', 'benchmarks.md');
  const [start, end] = ['<!-- bench:latest:start -->', '<!-- bench:latest:end -->'];
  const page = readFileSync(file, 'utf8');
  const from = page.indexOf(start);
  const to = page.indexOf(end);
  if (from < 0 || to < from) return ctx.log(`${file} has no ${start} … ${end}: not recorded there`);
  const body = report.replace(/^## relay-hub bench, (.*)$/m, 'Run of $1, written by `npm run bench`.').trim();
  writeFileSync(file, `${page.slice(0, from + start.length)}\n${body}\n${page.slice(to)}`);
  ctx.log(`recorded in ${file}`);
}
