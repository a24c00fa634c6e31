import { DeadlineQueue, type Deadline } from '../../src/relay/deadline-queue';

describe('DeadlineQueue', () => {
  beforeEach(() => jest.useFakeTimers({ now: Date.UTC(2026, 0, 1) }));
  afterEach(() => jest.useRealTimers());

  const fired: string[] = [];
  beforeEach(() => (fired.length = 0));
  const deadline = (name: string, then?: () => void): Deadline => ({
    dueMs: 0,
    slot: -1,
    fire: () => {
      fired.push(name);
      then?.();
    },
  });

  it('fires each deadline at its due millisecond, in due order, with one Node timer for all', () => {
    const queue = new DeadlineQueue();
    const start = Date.now();
    const offsets = Array.from({ length: 500 }, (_, i) => ((i * 7919) % 500) + 1); // 1..500 ms, shuffled
    for (const offset of offsets) queue.add(deadline(String(offset)), start + offset);
    expect(jest.getTimerCount()).toBe(1);
    for (let ms = 1; ms <= 500; ms++) {
      jest.advanceTimersByTime(1);
      expect(fired).toEqual(Array.from({ length: ms }, (_, i) => String(i + 1)));
    }
    expect(queue.size).toBe(0);
    expect(jest.getTimerCount()).toBe(0);
  });

  it('fires deadlines already due asynchronously, not inside add', () => {
    const queue = new DeadlineQueue();
    queue.add(deadline('past'), Date.now() - 1000);
    expect(fired).toEqual([]);
    jest.advanceTimersByTime(0);
    expect(fired).toEqual(['past']);
  });

  it('removes and moves deadlines anywhere in the queue', () => {
    const queue = new DeadlineQueue();
    const now = Date.now();
    const items = Array.from({ length: 50 }, (_, i) => deadline(`d${i}`));
    items.forEach((item, i) => queue.add(item, now + 100 + i));
    for (let i = 0; i < 50; i += 2) queue.remove(items[i]);
    queue.remove(items[0]); // not queued any more: nothing happens
    queue.add(items[49], now + 10); // moved to the front
    expect(queue.size).toBe(25);
    jest.advanceTimersByTime(10);
    expect(fired).toEqual(['d49']);
    jest.advanceTimersByTime(200);
    expect(fired).toEqual(['d49', ...Array.from({ length: 24 }, (_, i) => `d${2 * i + 1}`)]);
    expect(jest.getTimerCount()).toBe(0);
  });

  it('lets a firing deadline queue itself again', () => {
    const queue = new DeadlineQueue();
    const again: Deadline = deadline('first', () => {
      again.fire = () => fired.push('second');
      queue.add(again, Date.now() + 1000);
    });
    queue.add(again, Date.now() + 1000);
    jest.advanceTimersByTime(1000);
    expect(fired).toEqual(['first']);
    jest.advanceTimersByTime(999);
    expect(fired).toEqual(['first']);
    jest.advanceTimersByTime(1);
    expect(fired).toEqual(['first', 'second']);
  });

  it('waits correctly beyond the 24.8-day setTimeout limit', () => {
    const queue = new DeadlineQueue();
    queue.add(deadline('far'), Date.now() + 30 * 86_400_000);
    jest.advanceTimersByTime(30 * 86_400_000 - 1);
    expect(fired).toEqual([]);
    jest.advanceTimersByTime(1);
    expect(fired).toEqual(['far']);
  });

  it('keeps running the others when one deadline throws', () => {
    const queue = new DeadlineQueue();
    queue.add(
      deadline('throws', () => {
        throw new Error('boom');
      }),
      Date.now() + 5,
    );
    queue.add(deadline('later'), Date.now() + 10);
    expect(() => jest.advanceTimersByTime(5)).toThrow('boom');
    jest.advanceTimersByTime(5);
    expect(fired).toEqual(['throws', 'later']);
  });
});
