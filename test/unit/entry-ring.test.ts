import { BufferPool, EntryRing } from '../../src/store/memory/entry-ring';
import { prng } from '../helpers/prng';

/** What the ring should hold, as plain arrays: [seq, id, json], oldest first. */
type Model = [number, string, string][];

function contents(ring: EntryRing): [number, string][] {
  return Array.from({ length: ring.length }, (_, position) => [ring.seqAt(position), ring.jsonAt(position)]);
}

/** Pushes `entries` in order and checks that the ring then holds exactly them. */
function pushAndExpect(ring: EntryRing, entries: Model): void {
  for (const [seq, id, json] of entries) ring.push(seq, id, json);
  expectSame(ring, entries);
}

function expectSame(ring: EntryRing, model: Model): void {
  expect(contents(ring)).toEqual(model.map(([seq, , json]) => [seq, json]));
  for (const [position, [, id]] of model.entries()) expect(ring.positionOf(id)).toBe(position);
}

describe('EntryRing', () => {
  it('keeps entries oldest first and finds them by id', () => {
    const ring = new EntryRing(10);
    pushAndExpect(ring, [
      [1, 'a', '{"text":"one"}'],
      [2, 'b', '{"text":"two"}'],
    ]);
    expect(ring.positionOf('c')).toBe(-1);
  });

  it('drops the oldest entry past maxEntries and says which seq went', () => {
    const ring = new EntryRing(2);
    expect(ring.push(1, 'a', '1')).toBe(0);
    expect(ring.push(2, 'b', '2')).toBe(0);
    expect(ring.push(3, 'c', '3')).toBe(1);
    expect(ring.push(4, 'd', '4')).toBe(2);
    expectSame(ring, [
      [3, 'c', '3'],
      [4, 'd', '4'],
    ]);
    expect(ring.positionOf('a')).toBe(-1);
  });

  it('holds one entry when maxEntries is 1', () => {
    const ring = new EntryRing(1);
    ring.push(1, 'a', 'x'.repeat(5000));
    expect(ring.push(2, 'b', 'y')).toBe(1);
    expectSame(ring, [[2, 'b', 'y']]);
  });

  it('keeps characters outside ASCII and tells an id from its prefix', () => {
    const ring = new EntryRing(4);
    pushAndExpect(ring, [
      [1, 'ü-1', '{"text":"grüße 👋"}'],
      [2, 'ü-10', '{"text":"日本語"}'],
    ]);
    expect(ring.positionOf('ü-')).toBe(-1);
    expect(ring.positionOf('u-1')).toBe(-1);
  });

  it('takes an entry larger than its buffer, and gives the room back once such entries are gone', () => {
    const ring = new EntryRing(3);
    const big = 'b'.repeat(100_000);
    ring.push(1, 'a', big);
    expect(ring.jsonAt(0)).toBe(big);
    // Small entries push the big one out; the buffer shrinks as it moves them down.
    for (let seq = 2; seq < 2000; seq++) ring.push(seq, `id-${seq}`, `{"n":${seq}}`);
    expectSame(ring, [
      [1997, 'id-1997', '{"n":1997}'],
      [1998, 'id-1998', '{"n":1998}'],
      [1999, 'id-1999', '{"n":1999}'],
    ]);
    expect((ring as unknown as { bytes: Buffer }).bytes.length).toBeLessThanOrEqual(512);
  });

  it('finds the first entry at or above a seq', () => {
    const ring = new EntryRing(3);
    for (const seq of [2, 4, 6, 8]) ring.push(seq, String(seq), '{}');
    expect([0, 4, 5, 8, 9].map((seq) => ring.firstAtLeast(seq))).toEqual([0, 0, 1, 2, 3]);
  });

  it('matches a plain array over many pushes of mixed sizes and characters', () => {
    const next = prng(15);
    const texts = ['', 'a', 'grüße', '👋👋', 'x'.repeat(3000), '日本語'.repeat(200)];
    for (const maxEntries of [1, 2, 7, 200]) {
      const ring = new EntryRing(maxEntries);
      const model: Model = [];
      for (let seq = 1; seq <= 3000; seq++) {
        const id = `${seq}-${texts[Math.floor(next() * texts.length)].slice(0, 3)}`;
        const json = JSON.stringify({ seq, text: texts[Math.floor(next() * texts.length)] });
        const dropped = ring.push(seq, id, json);
        model.push([seq, id, json]);
        expect(dropped).toBe(model.length > maxEntries ? model.shift()![0] : 0);
        if (seq % 97 === 0) expectSame(ring, model);
      }
      expectSame(ring, model);
    }
  });

  it('reports the bytes it holds: its whole buffer and its slots, growing and shrinking with its entries', () => {
    const ring = new EntryRing(4);
    const empty = ring.byteSize;
    expect(empty).toBeGreaterThanOrEqual(256);
    ring.push(1, 'a', 'x'.repeat(60_000));
    // The buffer is sized for twice to four times what it holds.
    expect(ring.byteSize).toBeGreaterThanOrEqual(2 * 60_000);
    expect(ring.byteSize).toBeLessThanOrEqual(4 * 60_000 + 1024);
    for (let seq = 2; seq <= 5; seq++) ring.push(seq, String(seq), '{}');
    expect(ring.byteSize).toBeLessThan(1024);
  });

  it('refuses a maxEntries that is not a positive integer', () => {
    expect(() => new EntryRing(0)).toThrow('maxEntries must be a positive integer, not 0');
    expect(() => new EntryRing(1.5)).toThrow(RangeError);
  });

  it('writes an entry given in three parts as the one JSON they make', () => {
    const ring = new EntryRing(3);
    const text = 'grüße '.repeat(100);
    ring.push(1, 'a', '{"id":"a","text":"', text, '"}');
    ring.push(2, 'b', '{"n":2}');
    expectSame(ring, [
      [1, 'a', `{"id":"a","text":"${text}"}`],
      [2, 'b', '{"n":2}'],
    ]);
  });
});

describe('BufferPool', () => {
  const bufferOf = (ring: EntryRing) => (ring as unknown as { bytes: Buffer }).bytes;

  it('gives a growing ring the buffer another ring grew out of or released, and keeps what rings hold intact', () => {
    const pool = new BufferPool(1 << 20);
    const first = new EntryRing(4, pool);
    first.push(1, 'a', 'x'.repeat(10_000));
    const grown = bufferOf(first);
    first.release();
    expect(pool.byteSize).toBeGreaterThanOrEqual(grown.length);
    const second = new EntryRing(4, pool);
    second.push(1, 'b', 'y'.repeat(10_000));
    // Same size class: the released buffer, not a new one; its old bytes never show through.
    expect(bufferOf(second)).toBe(grown);
    expectSame(second, [[1, 'b', 'y'.repeat(10_000)]]);
    second.push(2, 'c', '{}');
    expectSame(second, [
      [1, 'b', 'y'.repeat(10_000)],
      [2, 'c', '{}'],
    ]);
  });

  it('keeps no more than its bound, the largest buffers going first', () => {
    const pool = new BufferPool(1000);
    pool.give(Buffer.alloc(600));
    pool.give(Buffer.alloc(600));
    expect(pool.byteSize).toBe(600);
    const small = Buffer.alloc(300);
    pool.give(small);
    pool.give(Buffer.alloc(300));
    // The 600 went to make room for the smaller ones.
    expect(pool.byteSize).toBe(600);
    expect([pool.take(300), pool.take(300)]).toContain(small);
    expect(pool.byteSize).toBe(0);
    pool.give(Buffer.alloc(2000));
    expect(pool.byteSize).toBe(0);
  });

  it('a released ring holds nothing and takes entries again', () => {
    const ring = new EntryRing(2, new BufferPool(1 << 20));
    ring.push(1, 'a', 'x'.repeat(1000));
    ring.release();
    expect(ring.length).toBe(0);
    ring.push(2, 'b', '{}');
    expectSame(ring, [[2, 'b', '{}']]);
  });
});
