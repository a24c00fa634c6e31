import { RecentIds } from '../src/recent-ids';

describe('embed RecentIds (inbound dedupe)', () => {
  it('reports an id as seen the second time', () => {
    const ids = new RecentIds(10);
    expect(ids.seen('a')).toBe(false);
    expect(ids.seen('b')).toBe(false);
    expect(ids.seen('a')).toBe(true);
    expect(ids.seen('b')).toBe(true);
  });

  it('stays bounded, forgetting the least recently seen id first', () => {
    const ids = new RecentIds(3);
    for (const id of ['a', 'b', 'c']) ids.seen(id);
    // Seeing 'a' again makes 'b' the oldest.
    expect(ids.seen('a')).toBe(true);
    expect(ids.seen('d')).toBe(false);
    expect(ids.size).toBe(3);
    expect(ids.seen('b')).toBe(false);
    expect(ids.seen('a')).toBe(true);
  });

  it('holds at most the limit across many ids', () => {
    const ids = new RecentIds(1_000);
    for (let i = 0; i < 5_000; i++) ids.seen(`id-${i}`);
    expect(ids.size).toBe(1_000);
    expect(ids.seen('id-4999')).toBe(true);
    expect(ids.seen('id-0')).toBe(false);
  });

  it('rejects a non-positive limit', () => {
    expect(() => new RecentIds(0)).toThrow(/dedupeLimit/);
  });
});
