import { RelayChatError } from '../src/codes';
import { Outbox, randomId } from '../src/outbox';

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('embed Outbox', () => {
  it('keeps messages in send order, each with its own clientMessageId assigned at send time', () => {
    let n = 0;
    const outbox = new Outbox(10, () => `id-${++n}`);
    void outbox.add('first');
    void outbox.add('second', { k: 1 });
    expect(outbox.size).toBe(2);
    const head = outbox.head()!;
    expect(head).toMatchObject({ clientMessageId: 'id-1', text: 'first' });
    outbox.settle(head, { result: { id: 'h1', ts: 't1' } });
    expect(outbox.head()).toMatchObject({ clientMessageId: 'id-2', text: 'second', data: { k: 1 } });
  });

  it('resolves or rejects exactly the promise of the settled entry', async () => {
    const outbox = new Outbox(10);
    const first = outbox.add('a');
    const second = outbox.add('b');
    outbox.settle(outbox.head()!, { error: new RelayChatError('AGENT_OFFLINE') });
    outbox.settle(outbox.head()!, { result: { id: 'x', ts: 'y' } });
    await expect(first).rejects.toMatchObject({ code: 'AGENT_OFFLINE' });
    await expect(second).resolves.toEqual({ id: 'x', ts: 'y' });
    expect(outbox.size).toBe(0);
  });

  it('rejects with OUTBOX_FULL at the limit without disturbing queued messages', async () => {
    const outbox = new Outbox(2);
    void outbox.add('1');
    void outbox.add('2');
    const err = await outbox.add('3').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RelayChatError);
    expect(err).toMatchObject({ code: 'OUTBOX_FULL' });
    expect(outbox.size).toBe(2);
    outbox.settle(outbox.head()!, { result: { id: 'i', ts: 't' } });
    // Room again once an entry is acked.
    void outbox.add('3');
    expect(outbox.size).toBe(2);
  });

  it('keeps grounded entries queued, with the same id, until settled', () => {
    const outbox = new Outbox(5, () => 'same');
    void outbox.add('m');
    const entry = outbox.head()!;
    entry.flight = {};
    outbox.groundAll();
    expect(outbox.head()).toBe(entry);
    expect(entry.flight).toBeUndefined();
    expect(entry.clientMessageId).toBe('same');
  });

  it('rejectAll empties the outbox and rejects every pending send', async () => {
    const outbox = new Outbox(5);
    const sends = [outbox.add('a'), outbox.add('b')];
    outbox.rejectAll(new RelayChatError('CLOSED'));
    expect(outbox.size).toBe(0);
    for (const send of sends) await expect(send).rejects.toMatchObject({ code: 'CLOSED' });
  });

  it('ignores a second settle of the same entry', async () => {
    const outbox = new Outbox(5);
    const send = outbox.add('a');
    const entry = outbox.head()!;
    outbox.settle(entry, { result: { id: '1', ts: 't' } });
    outbox.settle(entry, { error: new RelayChatError('TIMEOUT') });
    await expect(send).resolves.toEqual({ id: '1', ts: 't' });
  });

  it('rejects a non-positive or fractional limit', () => {
    expect(() => new Outbox(0)).toThrow(/outboxLimit/);
    expect(() => new Outbox(1.5)).toThrow(/outboxLimit/);
  });
});

describe('embed randomId', () => {
  it('returns distinct UUIDv4 strings', () => {
    const ids = new Set(Array.from({ length: 100 }, randomId));
    expect(ids.size).toBe(100);
    for (const id of ids) expect(id).toMatch(UUID_V4);
  });

  it('falls back to getRandomValues where randomUUID is missing (insecure contexts)', () => {
    const original = crypto.randomUUID;
    Object.defineProperty(crypto, 'randomUUID', { value: undefined, configurable: true });
    try {
      expect(randomId()).toMatch(UUID_V4);
    } finally {
      Object.defineProperty(crypto, 'randomUUID', { value: original, configurable: true });
    }
  });
});
