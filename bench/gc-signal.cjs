// Preloaded into both servers by the benches (bench/run-processes.mjs, bench/scale-processes.mjs:
// `node --expose-gc --require …`), so RSS readings
// compare live memory rather than uncollected garbage:
// - SIGUSR2 runs a plain full garbage collection (`gc()`). It leaves the young generation at the
//   size the last allocation burst grew it to (up to 128 MiB, committed but empty after the GC), so
//   RSS read after it carries that burst too: a bounded cost that does not grow with connections;
// - SIGURG runs V8's memory-reducing full collection (the one it runs before giving up on memory),
//   which also shrinks the young generation back, leaving what is retained. SIGURG is ignored by
//   default, so a server started without this file is not killed by it.
process.on('SIGUSR2', () => globalThis.gc?.());
process.on('SIGURG', () => globalThis.gc?.({ type: 'major', execution: 'sync', flavor: 'last-resort' }));
// SIGWINCH (ignored by default) prints V8's heap spaces, committed and used, as one JSON line on
// stderr: where an RSS reading's bytes are, without collecting anything; and `allocated`, the bytes
// allocated on the V8 heap since the process started (collected objects included).
const v8 = require('node:v8');

// Bytes allocated = what each collection found in use before it ran, less what the previous one
// left; plus what is in use now over what the last one left. V8's GC profiler reports both sides.
let allocated = 0;
let mark = v8.getHeapStatistics().used_heap_size;
let gcProfiler = new v8.GCProfiler();
gcProfiler.start();
function allocatedSoFar() {
  for (const gc of gcProfiler.stop()?.statistics ?? []) {
    allocated += gc.beforeGC.heapStatistics.usedHeapSize - mark;
    mark = gc.afterGC.heapStatistics.usedHeapSize;
  }
  gcProfiler = new v8.GCProfiler();
  gcProfiler.start();
  const now = v8.getHeapStatistics().used_heap_size;
  allocated += now - mark;
  mark = now;
  return allocated;
}

process.on('SIGWINCH', () => {
  const mib = (n) => Math.round((n / 2 ** 20) * 10) / 10;
  const spaces = Object.fromEntries(v8.getHeapSpaceStatistics().map((s) => [s.space_name, [mib(s.space_size), mib(s.space_used_size)]]));
  const { rss, heapTotal, heapUsed, external, arrayBuffers } = process.memoryUsage();
  const usage = {
    rss: mib(rss),
    heapTotal: mib(heapTotal),
    heapUsed: mib(heapUsed),
    external: mib(external),
    arrayBuffers: mib(arrayBuffers),
  };
  process.stderr.write(`heap ${JSON.stringify({ ...usage, spaces, allocated: allocatedSoFar() })}\n`);
});
