// Sums up what bench/pause-log.cjs wrote: per process, its collections by kind (count, total,
// median and worst pause) and its event-loop delay (the median over two-second windows of their
// p99 and of their worst delay). `node bench/pause-summary.mjs [dir]`.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const dir = process.argv[2] ?? process.env.PAUSE_LOG_DIR ?? '/tmp/relay-hub-pauses';
// perf_hooks' NODE_PERFORMANCE_GC_* flags.
const KINDS = { 1: 'scavenge', 2: 'minor mark-sweep', 4: 'mark-compact', 8: 'incremental marking', 16: 'weak callbacks' };
const median = (values) => [...values].sort((a, b) => a - b)[values.length >> 1] ?? 0;

for (const file of readdirSync(dir).filter((f) => f.endsWith('.json'))) {
  const { argv, collections, loop } = JSON.parse(readFileSync(join(dir, file), 'utf8'));
  console.log(`${file.replace('.json', '')} ${argv.join(' ').slice(0, 100)}`);
  const byKind = new Map();
  for (const [kind, ms] of collections) byKind.set(kind, [...(byKind.get(kind) ?? []), ms]);
  for (const [kind, pauses] of byKind) {
    const total = pauses.reduce((a, b) => a + b, 0);
    console.log(
      `  ${KINDS[kind] ?? kind}: ${pauses.length}, ${total.toFixed(0)} ms in all, median ${median(pauses).toFixed(2)} ms, worst ${Math.max(...pauses).toFixed(1)} ms`,
    );
  }
  const busy = loop.filter((w) => w.samples > 100);
  console.log(
    `  event-loop delay per 2 s (median over ${busy.length} windows): p99 ${median(busy.map((w) => w.p99)).toFixed(2)} ms, worst ${median(busy.map((w) => w.max)).toFixed(1)} ms`,
  );
}
