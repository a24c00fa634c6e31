import { RecentIds } from '../../src/sdk/agent/recent-ids';

describe('RecentIds (the agent SDK drops redelivered messages by id)', () => {
  it('reports an id seen before, and not a new one', () => {
    const ids = new RecentIds(3);
    expect(ids.seen('a')).toBe(false);
    expect(ids.seen('b')).toBe(false);
    expect(ids.seen('a')).toBe(true);
    expect(ids.size).toBe(2);
  });

  it('forgets the oldest id once more than the limit are held', () => {
    const ids = new RecentIds(2);
    for (const id of ['a', 'b', 'c']) ids.seen(id);
    expect(ids.size).toBe(2);
    expect(ids.seen('b')).toBe(true);
    expect(ids.seen('c')).toBe(true);
    expect(ids.seen('a')).toBe(false); // forgotten, so handled again
  });

  it.each([0, -1, 1.5, Number.NaN])('refuses dedupeSize %p with a clear error', (limit) => {
    expect(() => new RecentIds(limit)).toThrow('RelayAgent: dedupeSize must be a positive integer');
  });
});
