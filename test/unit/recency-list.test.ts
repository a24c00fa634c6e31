import { RecencyList, type Listed } from '../../src/store/memory/recency-list';

interface Entry extends Listed<Entry> {
  readonly key: string;
}

describe('RecencyList', () => {
  const entry = (key: string, expiresAt: number): Entry => ({ key, expiresAt, older: null, newer: null });
  const keys = (list: RecencyList<Entry>) => [...list.values()].map((value) => value.key);
  const dropping = () => {
    const dropped: string[] = [];
    return { dropped, list: new RecencyList<Entry>((value) => dropped.push(value.key)) };
  };

  it('keeps values least recently touched first; get touches, peek does not', () => {
    const list = new RecencyList<Entry>();
    for (const key of ['a', 'b', 'c']) list.touch(entry(key, 100));
    list.get('a', 0);
    list.peek('b', 0);
    expect(keys(list)).toEqual(['b', 'c', 'a']);
    list.get('a', 0);
    expect(keys(list)).toEqual(['b', 'c', 'a']);
  });

  it('replaces another value under the same key, telling onDrop', () => {
    const { list, dropped } = dropping();
    list.touch(entry('a', 100));
    list.touch(entry('b', 100));
    const second = entry('a', 200);
    list.touch(second);
    expect(keys(list)).toEqual(['b', 'a']);
    expect(list.peek('a', 0)).toBe(second);
    expect(list.size).toBe(2);
    expect(dropped).toEqual(['a']);
  });

  it('adds a value under a key a read found empty as the newest, and moves it on touch', () => {
    const list = new RecencyList<Entry>();
    list.touch(entry('a', 100));
    expect(list.get('b', 0)).toBeUndefined();
    const b = entry('b', 100);
    list.add(b);
    list.add(entry('c', 100));
    expect(keys(list)).toEqual(['a', 'b', 'c']);
    expect(list.peek('b', 0)).toBe(b);
    list.touch(b);
    expect(keys(list)).toEqual(['a', 'c', 'b']);
    expect(list.size).toBe(3);
  });

  it('hides and drops an expired value on read, telling onDrop', () => {
    const { list, dropped } = dropping();
    list.touch(entry('a', 10));
    expect(list.peek('a', 9)?.key).toBe('a');
    expect(list.get('a', 10)).toBeUndefined();
    expect(list.size).toBe(0);
    expect(keys(list)).toEqual([]);
    expect(dropped).toEqual(['a']);
  });

  it('trims from the least recently used end while over its bound', () => {
    const { list, dropped } = dropping();
    for (let i = 1; i <= 5; i++) list.touch(entry(`k${i}`, 100));
    list.get('k1', 0);
    list.trim(() => list.size > 3);
    expect(keys(list)).toEqual(['k4', 'k5', 'k1']);
    expect(dropped).toEqual(['k2', 'k3']);
    list.trim(() => true);
    expect(keys(list)).toEqual([]);
    list.touch(entry('again', 100));
    expect(keys(list)).toEqual(['again']);
  });

  it('sweeps expired values from the oldest end, at most once a second', () => {
    const list = new RecencyList<Entry>();
    for (let i = 1; i <= 4; i++) list.touch(entry(`k${i}`, i * 1000));
    list.sweep(2500);
    expect(keys(list)).toEqual(['k3', 'k4']);
    list.sweep(3400);
    expect(keys(list)).toEqual(['k3', 'k4']);
    list.sweep(4000);
    expect(keys(list)).toEqual([]);
  });

  it('deletes from anywhere in the list, answering whether the key was there', () => {
    const { list, dropped } = dropping();
    for (const key of ['a', 'b', 'c']) list.touch(entry(key, 100));
    expect(list.delete('b')).toBe(true);
    expect(list.delete('b')).toBe(false);
    expect(keys(list)).toEqual(['a', 'c']);
    expect(list.delete('c')).toBe(true);
    list.touch(entry('d', 100));
    expect(keys(list)).toEqual(['a', 'd']);
    expect(dropped).toEqual(['b', 'c']);
  });

  it('lists again a value that was deleted or cleared away when it is touched', () => {
    const list = new RecencyList<Entry>();
    const [a, b, c] = ['a', 'b', 'c'].map((key) => entry(key, 100));
    for (const value of [a, b, c]) list.touch(value);
    list.delete('b');
    list.touch(b);
    expect(keys(list)).toEqual(['a', 'c', 'b']);
    expect(list.peek('b', 0)).toBe(b);
    list.clear();
    list.touch(c);
    expect(keys(list)).toEqual(['c']);
    expect(list.size).toBe(1);
    expect(list.peek('c', 0)).toBe(c);
  });
});
