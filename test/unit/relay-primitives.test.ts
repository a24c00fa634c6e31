import { AgentKeyMatcher } from '../../src/auth/agent-keys';
import { durationSeconds } from '../../src/config/duration';
import { validate, version } from 'uuid';
import { MessageStamper } from '../../src/relay/ids';
import { payloadError } from '../../src/protocol/payload-limits';
import { pickByRendezvous } from '../../src/relay/rendezvous';
import { TokenBucket } from '../../src/limits/token-bucket';

describe('pickByRendezvous', () => {
  const runtimes = ['r1', 'r2', 'r3', 'r4'];
  const keys = Array.from({ length: 2000 }, (_, i) => `user-${i}`);
  const pick = (key: string, from: string[]) => pickByRendezvous(key, from, (r) => r)!;

  it('is stable for a key and spreads keys over all candidates', () => {
    const counts = new Map<string, number>();
    for (const key of keys) {
      expect(pick(key, runtimes)).toBe(pick(key, [...runtimes].reverse()));
      counts.set(pick(key, runtimes), (counts.get(pick(key, runtimes)) ?? 0) + 1);
    }
    for (const r of runtimes) expect(counts.get(r)).toBeGreaterThan(350); // fair share is 500
  });

  it('moves only the keys of a leaving candidate', () => {
    const remaining = runtimes.filter((r) => r !== 'r2');
    for (const key of keys) {
      const before = pick(key, runtimes);
      const after = pick(key, remaining);
      if (before !== 'r2') expect(after).toBe(before);
      else expect(remaining).toContain(after);
    }
  });

  it('returns undefined without candidates', () => {
    expect(pickByRendezvous('k', [], (r: string) => r)).toBeUndefined();
  });
});

describe('MessageStamper', () => {
  it('stamps a version 7, variant 10 UUID whose millisecond is ts, over many milliseconds', async () => {
    const stamper = new MessageStamper();
    const before = Date.now();
    const seen = new Set<string>();
    while (seen.size < 5) {
      const { id, ts } = stamper.next();
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      const ms = parseInt(id.replace(/-/g, '').slice(0, 12), 16);
      expect(new Date(ms).toISOString()).toBe(ts);
      expect(ms).toBeGreaterThanOrEqual(before);
      seen.add(ts);
      await new Promise((resolve) => setImmediate(resolve));
    }
  });

  it('sorts in creation order, also within one millisecond, over many refills of its random pool', () => {
    const stamper = new MessageStamper();
    const ids = Array.from({ length: 5000 }, () => stamper.next().id);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect([validate(id), version(id)]).toEqual([true, 7]);
  });

  it('never goes backwards when the clock does: the counter carries on in the last millisecond, ts too', () => {
    const stamper = new MessageStamper();
    const clock = jest.spyOn(Date, 'now');
    try {
      const stamps = [1_700_000_000_500, 1_700_000_000_500, 1_700_000_000_100, 1_700_000_000_600].map((now) => {
        clock.mockReturnValue(now);
        return stamper.next();
      });
      const ids = stamps.map((s) => s.id);
      expect([...ids].sort()).toEqual(ids);
      expect(stamps.map((s) => s.ts)).toEqual([
        '2023-11-14T22:13:20.500Z',
        '2023-11-14T22:13:20.500Z',
        '2023-11-14T22:13:20.500Z',
        '2023-11-14T22:13:20.600Z',
      ]);
      expect(ids[2].slice(0, 13)).toBe(ids[0].slice(0, 13)); // same millisecond field
    } finally {
      clock.mockRestore();
    }
  });

  it('borrows the next millisecond when a millisecond runs out of counter values (2^31 ids)', () => {
    const stamper = new MessageStamper();
    const clock = jest.spyOn(Date, 'now').mockReturnValue(1_700_000_000_500);
    try {
      const first = stamper.next();
      (stamper as unknown as { seq: number }).seq = 0x7fffffff;
      const borrowed = stamper.next();
      const after = stamper.next();
      expect(first.ts).toBe('2023-11-14T22:13:20.500Z');
      expect([borrowed.ts, after.ts]).toEqual(['2023-11-14T22:13:20.501Z', '2023-11-14T22:13:20.501Z']);
      expect([first.id, borrowed.id, after.id].sort()).toEqual([first.id, borrowed.id, after.id]);
      for (const { id } of [borrowed, after]) expect([validate(id), version(id)]).toEqual([true, 7]);
    } finally {
      clock.mockRestore();
    }
  });

  it('keeps separate stampers (two hubs in one process) independent and their ids distinct', () => {
    const [a, b] = [new MessageStamper(), new MessageStamper()];
    const ids = Array.from({ length: 1000 }, (_, i) => (i % 2 ? a : b).next().id);
    expect(new Set(ids).size).toBe(ids.length);
  });
});

describe('payloadError', () => {
  it('counts UTF-8 bytes of text and data together', () => {
    expect(payloadError('a'.repeat(10), undefined, 10)).toBeNull();
    expect(payloadError('é'.repeat(6), undefined, 10)).toBe('PAYLOAD_TOO_LARGE');
    expect(payloadError('abc', { k: 'v' }, 12)).toBeNull(); // 3 + 9
    expect(payloadError('abcd', { k: 'v' }, 12)).toBe('PAYLOAD_TOO_LARGE');
  });
});

describe('TokenBucket', () => {
  it('allows a burst, refills at the rate, and counts strikes in a row', () => {
    const bucket = new TokenBucket(10, 3);
    const t0 = Date.now();
    expect([bucket.take(t0), bucket.take(t0), bucket.take(t0), bucket.take(t0)]).toEqual([true, true, true, false]);
    expect(bucket.take(t0)).toBe(false);
    expect(bucket.strikes).toBe(2);
    expect(bucket.take(t0 + 100)).toBe(true); // one token per 100 ms
    expect(bucket.strikes).toBe(0);
  });

  it('is unlimited at rate 0', () => {
    const bucket = new TokenBucket(0, 0);
    expect(Array.from({ length: 1000 }, () => bucket.take()).every(Boolean)).toBe(true);
  });
});

describe('AgentKeyMatcher', () => {
  it('matches any configured key exactly', () => {
    const keys = new AgentKeyMatcher(['alpha-key-0000000', 'beta-key-00000000']);
    expect(keys.matches('beta-key-00000000')).toBe(true);
    expect(keys.matches('beta-key-0000000')).toBe(false);
    expect(keys.matches('')).toBe(false);
    expect(keys.matches(undefined)).toBe(false);
    expect(keys.matches({ toString: () => 'alpha-key-0000000' })).toBe(false);
  });
});

describe('durationSeconds', () => {
  it('parses <n>(s|m|h|d) and rejects anything else', () => {
    expect([durationSeconds('45s'), durationSeconds('15m'), durationSeconds('2h'), durationSeconds('30d')]).toEqual([
      45, 900, 7200, 2592000,
    ]);
    for (const bad of ['0m', '15', '1w', '-1h', '15 m', '100000s']) expect(() => durationSeconds(bad)).toThrow(RangeError);
  });
});
