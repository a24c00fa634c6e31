import { Backoff } from '../src/backoff';

describe('embed Backoff', () => {
  it('draws full-jitter delays in [0, min(cap, base·2ⁿ)) with the spread kept wide at every attempt', () => {
    const baseMs = 100;
    const capMs = 5_000;
    const draws = 4_000;
    // One independent Backoff per draw keeps every sample at the same attempt number.
    for (let attempt = 0; attempt < 10; attempt++) {
      const bound = Math.min(capMs, baseMs * 2 ** attempt);
      let min = Infinity;
      let max = -Infinity;
      for (let i = 0; i < draws; i++) {
        const backoff = new Backoff({ baseMs, capMs });
        for (let skip = 0; skip < attempt; skip++) backoff.next();
        const delay = backoff.next();
        min = Math.min(min, delay);
        max = Math.max(max, delay);
      }
      expect(min).toBeGreaterThanOrEqual(0);
      expect(max).toBeLessThan(bound);
      expect(min).toBeLessThan(bound * 0.02);
      expect(max).toBeGreaterThan(bound * 0.98);
    }
  });

  it('defaults to a 500 ms base and a 5 s cap: widgets are back within about 0.78 × cap of the hub answering again (docs/soak.md)', () => {
    const backoff = new Backoff();
    expect(backoff.bound()).toBe(500);
    for (let i = 0; i < 20; i++) backoff.next();
    expect(backoff.bound()).toBe(5_000);
  });

  it('never exceeds the cap, even after very many attempts', () => {
    const backoff = new Backoff({ baseMs: 1_000, capMs: 30_000 }, () => 0.999999);
    for (let i = 0; i < 2_000; i++) {
      const delay = backoff.next();
      expect(Number.isFinite(delay)).toBe(true);
      expect(delay).toBeLessThan(30_000);
    }
    expect(backoff.bound()).toBe(30_000);
  });

  it('grows exponentially until the cap and starts over after reset', () => {
    const backoff = new Backoff({ baseMs: 500, capMs: 3_000 });
    const bounds: number[] = [];
    for (let i = 0; i < 5; i++) {
      bounds.push(backoff.bound());
      backoff.next();
    }
    expect(bounds).toEqual([500, 1_000, 2_000, 3_000, 3_000]);
    expect(backoff.attempts).toBe(5);
    backoff.reset();
    expect(backoff.attempts).toBe(0);
    expect(backoff.bound()).toBe(500);
  });

  it('uses the injected random source', () => {
    const backoff = new Backoff({ baseMs: 1_000, capMs: 10_000 }, () => 0.5);
    expect([backoff.next(), backoff.next(), backoff.next()]).toEqual([500, 1_000, 2_000]);
  });

  it('rejects settings that would make the loop spin or stall', () => {
    expect(() => new Backoff({ baseMs: 0 })).toThrow(/baseMs/);
    expect(() => new Backoff({ capMs: Number.NaN })).toThrow(/capMs/);
    // A cap below the base is lifted to the base rather than producing an empty range.
    expect(new Backoff({ baseMs: 800, capMs: 100 }).bound()).toBe(800);
  });
});
