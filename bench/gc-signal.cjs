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
