// The scale bench's markdown rows (bench/scale.mjs's results): one replica against the baseline,
// or several over one Redis. bench/report.mjs puts them in its table (and so docs/benchmarks.md);
// `node bench/scale.mjs` prints them alone.

import { mib } from './proc.mjs';

/** Markdown rows for bench/report.mjs's table (and so docs/benchmarks.md). */
export function scaleRows({ opts, results }) {
  if (opts.replicas > 1) return replicaRows({ opts, results });
  const h = results.hub;
  const b = results.baseline;
  const kb = (r, key) => (r ? (r[key] / 1000).toFixed(1) : 'n/a');
  const ratio = (key) => (h && b ? (h[key] / b[key]).toFixed(2) : 'n/a');
  const n = opts.clients.toLocaleString('en-US');
  const verdict = (ok) => (ok === undefined ? '—' : ok ? 'pass' : '**FAIL**');
  const held = h && h.connected >= opts.requested && h.stillConnected === h.connected && h.perSecond > 0;
  const lean = h && b ? h.perIdle <= 20_000 && h.perIdle <= 0.8 * b.perIdle : undefined;
  const rows = [
    [
      `${n} clients on one replica: connected (failed), connect time`,
      (r) => (r ? `${r.connected} (${r.failed}), ${r.connectSeconds.toFixed(1)} s` : 'n/a'),
      ratio('connectSeconds'),
      `${opts.requested.toLocaleString('en-US')}`,
      h ? held : undefined,
    ],
    [
      `… RSS per client ${opts.settleS} s after the burst, no forced GC (KB)`,
      (r) => kb(r, 'perIdle'),
      ratio('perIdle'),
      '≤ 20 KB, ≤ 0.8 × baseline',
      lean,
    ],
    [`… RSS per client after gc() (KB)`, (r) => kb(r, 'perGc'), ratio('perGc'), '—'],
    [`… RSS per client after the memory-reducing GC (KB)`, (r) => kb(r, 'perRetained'), ratio('perRetained'), '—'],
    [
      `… round trips/s for ${opts.active.toLocaleString('en-US')} active clients alongside (server RSS at the end, MiB)`,
      (r) => (r ? `${r.perSecond.toFixed(0)} (${mib(r.rssRelaying)})` : 'n/a'),
      ratio('perSecond'),
      '—',
    ],
  ];
  return rows.map(([metric, value, r, target, ok]) => `| ${metric} | ${value(h)} | ${value(b)} | ${r} | ${target} | ${verdict(ok)} |`);
}

/** The rows of a run over several replicas (the baseline column when --kinds named it too). */
function replicaRows({ opts, results }) {
  const h = results.hub;
  const b = results.baseline;
  const verdict = (ok) => (ok === undefined ? '—' : ok ? 'pass' : '**FAIL**');
  const mean = (r, key) => r.replicas.reduce((sum, rep) => sum + rep[key], 0) / r.replicas.length;
  const ratio = (f) => (h && b ? (f(h) / f(b)).toFixed(2) : 'n/a');
  const each =
    (f, digits = 1) =>
    (r) =>
      r ? r.replicas.map((rep) => f(rep).toFixed(digits)).join(' / ') : 'n/a';
  const three =
    (f, digits = 0) =>
    (r) =>
      r ? ['connect', 'idle', 'relay'].map((w) => f(r.redis[w]).toFixed(digits)).join(' / ') : 'n/a';
  const n = opts.clients.toLocaleString('en-US');
  const held = h && h.connected >= opts.requested && h.stillConnected === h.connected && h.perSecond > 0 && h.rtErrors === 0;
  const rows = [
    [
      `${n} clients over ${opts.replicas} replicas and one Redis: connected (failed), connect time (connects/s)`,
      (r) =>
        r ? `${r.connected} (${r.failed}), ${r.connectSeconds.toFixed(1)} s (${(r.connected / r.connectSeconds).toFixed(0)}/s)` : 'n/a',
      ratio((r) => r.connectSeconds),
      `${opts.requested.toLocaleString('en-US')}, all still connected at the end`,
      h ? held : undefined,
    ],
    [`… clients per replica`, each((rep) => rep.connected, 0), '—', '—'],
    [
      `… RSS per client per replica ${opts.settleS} s after the burst, no forced GC (KB)`,
      each((rep) => rep.perIdle / 1000),
      ratio((r) => mean(r, 'perIdle')),
      '≤ 20 KB',
      h ? h.replicas.every((rep) => rep.perIdle <= 20_000) : undefined,
    ],
    [`… RSS per client per replica after gc() (KB)`, each((rep) => rep.perGc / 1000), ratio((r) => mean(r, 'perGc')), '—'],
    [
      `… RSS per client per replica after the memory-reducing GC (KB)`,
      each((rep) => rep.perRetained / 1000),
      ratio((r) => mean(r, 'perRetained')),
      '—',
    ],
    [
      `… RSS per replica with its clients, no forced GC (MiB)`,
      each((rep) => rep.rssIdle / 2 ** 20, 0),
      ratio((r) => mean(r, 'rssIdle')),
      '—',
    ],
    [`Redis commands/s: connect burst / idle / relaying`, three((w) => w.opsPerS), ratio((r) => r.redis.relay.opsPerS), '—'],
    [`Redis CPU (% of one core): connect burst / idle / relaying`, three((w) => w.cpuPercent), ratio((r) => r.redis.relay.cpuPercent), '—'],
    [
      `Redis used memory: before / with the clients / at the end (MiB)`,
      (r) => (r ? [r.redis.usedMemory0, r.redis.usedMemoryIdle, r.redis.usedMemoryEnd].map((v) => mib(v)).join(' / ') : 'n/a'),
      ratio((r) => r.redis.usedMemoryIdle),
      '—',
    ],
    [
      `Round trips/s of ${opts.active.toLocaleString('en-US')} active clients among them, closed loop, bots on replica 1 (errors)`,
      (r) => (r ? `${r.perSecond.toFixed(0)} (${r.rtErrors})` : 'n/a'),
      ratio((r) => r.perSecond),
      '—',
    ],
    [
      `… p50 / p99 round trip at ${opts.rate}/s offered (ms)`,
      (r) => (r ? `${r.p50.toFixed(2)} / ${r.p99.toFixed(2)}` : 'n/a'),
      ratio((r) => r.p99),
      '—',
    ],
  ];
  return rows.map(([metric, value, r, target, ok]) => `| ${metric} | ${value(h)} | ${value(b)} | ${r} | ${target} | ${verdict(ok)} |`);
}
