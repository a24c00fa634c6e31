// Preloaded into both servers by bench/run.mjs (`node --expose-gc --require …`): SIGUSR2 runs a
// full garbage collection, so RSS readings compare live memory rather than uncollected garbage.
process.on('SIGUSR2', () => globalThis.gc?.());
