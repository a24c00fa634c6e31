// Preloaded into both servers by bench/run.mjs (`node --expose-gc --require …`), so RSS readings
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
// stderr: where an RSS reading's bytes are, without collecting anything.
process.on('SIGWINCH', () => {
  const v8 = require('node:v8');
  const mib = (n) => Math.round((n / 2 ** 20) * 10) / 10;
  const spaces = Object.fromEntries(v8.getHeapSpaceStatistics().map((s) => [s.space_name, [mib(s.space_size), mib(s.space_used_size)]]));
  const { rss, heapTotal, external, arrayBuffers } = process.memoryUsage();
  process.stderr.write(
    `heap ${JSON.stringify({ rss: mib(rss), heapTotal: mib(heapTotal), external: mib(external), arrayBuffers: mib(arrayBuffers), spaces })}\n`,
  );
});
