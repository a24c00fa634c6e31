// Preloaded into a server process by bench/profile.mjs (`node --require bench/profiler.cjs …`).
// SIGUSR1 starts the CPU profiler, the sampling heap profiler (objects that were collected
// included, so the sample covers everything allocated, not only what survived) and V8's GC
// profiler; SIGUSR2 stops them and writes `cpu.cpuprofile`, `alloc.heapprofile` and `gc.json`
// (every collection: its kind, pause and heap spaces before and after) to PROFILE_DIR, then prints
// `profiled` on stdout.
const { Session } = require('node:inspector/promises');
const { writeFileSync } = require('node:fs');
const { join } = require('node:path');
const { GCProfiler } = require('node:v8');

const dir = process.env.PROFILE_DIR;
const session = new Session();
session.connect();
let gcProfiler;

process.on('SIGUSR1', async () => {
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 200 });
  await session.post('Profiler.start');
  await session.post('HeapProfiler.enable');
  await session.post('HeapProfiler.startSampling', {
    samplingInterval: 4096,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  gcProfiler = new GCProfiler();
  gcProfiler.start();
  process.stdout.write('profiling\n');
});

process.on('SIGUSR2', async () => {
  const { profile } = await session.post('Profiler.stop');
  const { profile: heap } = await session.post('HeapProfiler.stopSampling');
  writeFileSync(join(dir, 'cpu.cpuprofile'), JSON.stringify(profile));
  writeFileSync(join(dir, 'alloc.heapprofile'), JSON.stringify(heap));
  writeFileSync(join(dir, 'gc.json'), JSON.stringify(gcProfiler.stop()));
  process.stdout.write('profiled\n');
});
