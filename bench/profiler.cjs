// Preloaded into a server process by bench/profile.mjs (`node --require bench/profiler.cjs …`).
// SIGUSR1 starts the CPU profiler and the sampling heap profiler (objects that were collected
// included, so the sample covers everything allocated, not only what survived); SIGUSR2 stops
// both and writes `cpu.cpuprofile` and `alloc.heapprofile` to PROFILE_DIR, then prints
// `profiled` on stdout.
const { Session } = require('node:inspector/promises');
const { writeFileSync } = require('node:fs');
const { join } = require('node:path');

const dir = process.env.PROFILE_DIR;
const session = new Session();
session.connect();

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
  process.stdout.write('profiling\n');
});

process.on('SIGUSR2', async () => {
  const { profile } = await session.post('Profiler.stop');
  const { profile: heap } = await session.post('HeapProfiler.stopSampling');
  writeFileSync(join(dir, 'cpu.cpuprofile'), JSON.stringify(profile));
  writeFileSync(join(dir, 'alloc.heapprofile'), JSON.stringify(heap));
  process.stdout.write('profiled\n');
});
