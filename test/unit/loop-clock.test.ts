import { LoopClock } from '../../src/cluster/command-deadlines';

// The responsive time the Redis command deadline runs on (docs/architecture.md, "When Redis
// fails"): real time, except that a blocked event loop's seconds beyond one step do not count.

function block(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

it('follows real time while ticks come in time', () => {
  const clock = new LoopClock(200);
  const realStart = performance.now();
  const start = clock.tick();
  for (let i = 0; i < 5; i++) {
    block(50);
    clock.tick();
  }
  const counted = clock.tick() - start;
  const elapsed = performance.now() - realStart;
  expect(counted).toBeGreaterThanOrEqual(250);
  expect(counted).toBeLessThanOrEqual(elapsed);
});

it('counts at most one step of a blocked turn, and never goes back', () => {
  const clock = new LoopClock(200);
  const start = clock.tick();
  block(300);
  const during = clock.now();
  expect(during - start).toBe(200);
  block(300);
  expect(clock.now()).toBe(during);
  const after = clock.tick();
  expect(after).toBe(during);
  block(50);
  expect(clock.now() - after).toBeGreaterThanOrEqual(50);
  expect(clock.now() - after).toBeLessThan(200);
});
