import { RateBudgets } from '../../src/limits/rate-budgets';

describe('RateBudgets', () => {
  it('allows the burst at once, then one per interval, per key', () => {
    const budgets = new RateBudgets({ ratePerS: 10, burst: 3 });
    const t0 = 1_000_000;
    expect([1, 2, 3, 4].map(() => budgets.take('a', t0))).toEqual([true, true, true, false]);
    expect(budgets.take('b', t0)).toBe(true);
    expect(budgets.take('a', t0 + 99)).toBe(false);
    expect(budgets.take('a', t0 + 100)).toBe(true);
    expect(budgets.take('a', t0 + 100)).toBe(false);
    // Idle long enough, the bucket is full again, and no fuller.
    expect([1, 2, 3, 4].map(() => budgets.take('a', t0 + 60_000))).toEqual([true, true, true, false]);
  });

  it('admits no more than burst + rate × time over any window', () => {
    const budgets = new RateBudgets({ ratePerS: 40, burst: 80 });
    let admitted = 0;
    for (let ms = 0; ms <= 3000; ms += 2) for (let n = 0; n < 3; n++) if (budgets.take('u', ms)) admitted++;
    expect(admitted).toBe(80 + 120);
  });

  it('forgets keys whose bucket is full again once the map has grown', () => {
    const budgets = new RateBudgets({ ratePerS: 1, burst: 1 });
    for (let i = 0; i < 1023; i++) budgets.take(`k${i}`, 0);
    expect(budgets.size).toBe(1023);
    budgets.take('late', 5000);
    expect(budgets.size).toBe(1);
  });

  it('lets a take that costs more than the bucket holds go into debt, which later takes wait out', () => {
    const budgets = new RateBudgets({ ratePerS: 1000, burst: 100 });
    const t0 = 5_000_000;
    expect(budgets.take('bot', t0, 500)).toBe(true); // a broadcast to 500 clients
    expect(budgets.take('bot', t0, 1)).toBe(false);
    // 500 tokens of debt at 1000/s: the bucket has one token again after 401 ms (500 - 99 tokens).
    expect(budgets.waitMs('bot', t0)).toBeCloseTo(401, 5);
    expect(budgets.take('bot', t0 + 400, 1)).toBe(false);
    expect(budgets.take('bot', t0 + 401, 1)).toBe(true);
    expect(budgets.waitMs('other', t0)).toBe(0);
  });

  it('spends into debt whatever the bucket holds, and says how many tokens it holds', () => {
    const budgets = new RateBudgets({ ratePerS: 1000, burst: 100 });
    const t0 = 5_000_000;
    expect(budgets.available('bot', t0)).toBe(100);
    expect(budgets.take('bot', t0, 40)).toBe(true);
    expect(budgets.available('bot', t0)).toBe(60);
    budgets.spend('bot', t0, 200); // an end that must go: 140 tokens of debt
    expect(budgets.available('bot', t0)).toBe(0);
    expect(budgets.take('bot', t0, 1)).toBe(false);
    expect(budgets.available('bot', t0 + 141)).toBe(1);
    expect(budgets.available('bot', t0 + 10_000)).toBe(100);
  });

  it('refuses a rate that is not positive', () => {
    expect(() => new RateBudgets({ ratePerS: 0, burst: 1 })).toThrow(RangeError);
  });
});
