import { NO_SLOT, SlotRecency } from '../../src/store/memory/slot-recency';

describe('SlotRecency', () => {
  const order = (slots: SlotRecency) => [...slots.inUse()];

  it('hands out each slot once, lowest first, and none when all are in use', () => {
    const slots = new SlotRecency(3);
    expect([slots.take(), slots.take(), slots.take()]).toEqual([0, 1, 2]);
    expect(slots.take()).toBe(NO_SLOT);
    expect(slots.size).toBe(3);
    expect(order(slots)).toEqual([0, 1, 2]);
  });

  it('keeps slots in use least recently touched first', () => {
    const slots = new SlotRecency(4);
    for (let i = 0; i < 4; i++) slots.take();
    slots.touch(0);
    slots.touch(2);
    slots.touch(2);
    expect(order(slots)).toEqual([1, 3, 0, 2]);
    expect(slots.oldest).toBe(1);
  });

  it('reuses a released slot, as the newest, wherever it was in the order', () => {
    const slots = new SlotRecency(3);
    for (let i = 0; i < 3; i++) slots.take();
    slots.release(1);
    expect(order(slots)).toEqual([0, 2]);
    expect(slots.size).toBe(2);
    expect(slots.take()).toBe(1);
    expect(order(slots)).toEqual([0, 2, 1]);
    slots.release(0);
    slots.release(1);
    expect(order(slots)).toEqual([2]);
    expect(slots.oldest).toBe(2);
    slots.release(2);
    expect(slots.oldest).toBe(NO_SLOT);
    expect(order(slots)).toEqual([]);
  });

  it('frees every slot on clear', () => {
    const slots = new SlotRecency(2);
    slots.take();
    slots.take();
    slots.clear();
    expect(slots.size).toBe(0);
    expect(slots.oldest).toBe(NO_SLOT);
    expect([slots.take(), slots.take(), slots.take()]).toEqual([0, 1, NO_SLOT]);
  });

  it('refuses a capacity that is not a positive integer', () => {
    expect(() => new SlotRecency(0)).toThrow(/positive integer/);
    expect(() => new SlotRecency(1.5)).toThrow(/positive integer/);
  });
});
