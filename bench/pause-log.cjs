// Preload (`NODE_OPTIONS="--require ./bench/pause-log.cjs"` on a bench command) to log every Node
// process's pauses: each garbage collection (kind, duration) and the event loop's delay (p50, p99 and
// worst per two seconds, `monitorEventLoopDelay` at 1 ms), written every two seconds to
// `$PAUSE_LOG_DIR/<pid>.json` (default /tmp/relay-hub-pauses) with the process's command line.
// `node bench/pause-summary.mjs [dir]` sums them up per process. Used for docs/benchmarks.md
// ("On a quiet machine"): which process's stalls make a latency slice's tail.
const { PerformanceObserver, monitorEventLoopDelay } = require('node:perf_hooks');
const fs = require('node:fs');
const path = require('node:path');

const dir = process.env.PAUSE_LOG_DIR ?? '/tmp/relay-hub-pauses';
fs.mkdirSync(dir, { recursive: true });
const collections = [];
const loop = [];
const delay = monitorEventLoopDelay({ resolution: 1 });
delay.enable();
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) collections.push([entry.detail?.kind ?? 0, entry.duration]);
}).observe({ entryTypes: ['gc'] });
setInterval(() => {
  loop.push({ p50: delay.percentile(50) / 1e6, p99: delay.percentile(99) / 1e6, max: delay.max / 1e6, samples: delay.count });
  delay.reset();
  fs.writeFileSync(path.join(dir, `${process.pid}.json`), JSON.stringify({ argv: process.argv.slice(1), collections, loop }));
}, 2000).unref();
