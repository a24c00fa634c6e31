import { RecordTable } from '../../src/store/memory/record-table';
import { NO_SLOT } from '../../src/store/memory/slot-recency';
import { prng } from '../helpers/prng';

describe('RecordTable', () => {
  it('finds a record by its name and gives back its id and ts', () => {
    const table = new RecordTable(4, 1024, () => {});
    table.insert(2, 'bot-1 3:ana:m-1', 'id-1', '2026-11-26T18:00:00.000Z');
    table.insert(0, 'bot-1 3:ana:m-10', 'id-2', 'ts-2');
    expect(table.find('bot-1 3:ana:m-1')).toBe(2);
    expect(table.find('bot-1 3:ana:m-10')).toBe(0);
    expect(table.find('bot-1 3:ana:m-')).toBe(NO_SLOT);
    expect([table.idOf(2), table.tsOf(2)]).toEqual(['id-1', '2026-11-26T18:00:00.000Z']);
  });

  it('keeps names, ids and ts outside ASCII', () => {
    const table = new RecordTable(2, 1024, () => {});
    table.insert(1, 'bot 4:jürg:👋', 'idé', 'ts日本');
    expect(table.find('bot 4:jürg:👋')).toBe(1);
    expect(table.find('bot 4:jurg:👋')).toBe(NO_SLOT);
    expect([table.idOf(1), table.tsOf(1)]).toEqual(['idé', 'ts日本']);
  });

  it('forgets a removed record, and finds the others that had probed past it', () => {
    // 8 slots share a 16-entry index: with 8 names, runs of probes are certain.
    const table = new RecordTable(8, 4096, () => {});
    const names = Array.from({ length: 8 }, (_, i) => `name-${i}`);
    names.forEach((name, slot) => table.insert(slot, name, `id-${slot}`, 'ts'));
    for (const removed of [3, 0, 7]) {
      table.remove(removed);
      expect(table.find(names[removed])).toBe(NO_SLOT);
    }
    for (const slot of [1, 2, 4, 5, 6]) expect(table.find(names[slot])).toBe(slot);
  });

  it('takes arena space back from the earliest written, skipping removed records and evicting held ones', () => {
    const evicted: number[] = [];
    // Each record: 8 + 6 + 4 + 2 = 20 bytes; the arena holds three.
    const table = new RecordTable(8, 60, (slot) => evicted.push(slot));
    table.insert(0, 'name-0', 'id-0', 't0');
    table.insert(1, 'name-1', 'id-1', 't1');
    table.insert(2, 'name-2', 'id-2', 't2');
    table.remove(1);
    table.insert(3, 'name-3', 'id-3', 't3'); // the head's record (slot 0) goes
    expect(evicted).toEqual([0]);
    expect(table.find('name-0')).toBe(NO_SLOT);
    table.insert(4, 'name-4', 'id-4', 't4'); // slot 1's bytes were let go of: skipped, nothing evicted
    expect(evicted).toEqual([0]);
    expect([2, 3, 4].map((slot) => table.find(`name-${slot}`))).toEqual([2, 3, 4]);
    expect(table.idOf(4)).toBe('id-4');
  });

  it('refuses a record larger than its arena with a clear error', () => {
    const table = new RecordTable(2, 32, () => {});
    expect(() => table.insert(0, 'n'.repeat(40), 'id', 'ts')).toThrow('a record of 52 bytes does not fit a 32-byte arena');
    expect(table.find('n'.repeat(40))).toBe(NO_SLOT);
  });

  it('matches a plain Map over many inserts, removals and evictions', () => {
    const next = prng(15);
    for (const [capacity, arenaBytes] of [
      [4, 100],
      [16, 400],
      [64, 1 << 16],
    ]) {
      const model = new Map<string, { slot: number; id: string; ts: string }>();
      const nameOf = new Map<number, string>();
      const free = Array.from({ length: capacity }, (_, slot) => slot);
      const table = new RecordTable(capacity, arenaBytes, (slot) => {
        model.delete(nameOf.get(slot)!);
        nameOf.delete(slot);
        free.push(slot);
      });
      for (let step = 0; step < 10_000; step++) {
        const name = `n-${Math.floor(next() * 3 * capacity)}${'é'.repeat(Math.floor(next() * 4))}`;
        const found = table.find(name);
        expect(found).toBe(model.get(name)?.slot ?? NO_SLOT);
        if (found !== NO_SLOT) {
          expect([table.idOf(found), table.tsOf(found)]).toEqual([model.get(name)!.id, model.get(name)!.ts]);
          if (next() < 0.5) {
            table.remove(found);
            model.delete(name);
            nameOf.delete(found);
            free.push(found);
          }
        } else if (free.length > 0) {
          const slot = free.splice(Math.floor(next() * free.length), 1)[0];
          const id = `id-${step}`;
          const ts = String(step).repeat(Math.floor(next() * 3) + 1);
          table.insert(slot, name, id, ts);
          model.set(name, { slot, id, ts });
          nameOf.set(slot, name);
        }
      }
      for (const [name, { slot }] of model) expect(table.find(name)).toBe(slot);
    }
  });
});
