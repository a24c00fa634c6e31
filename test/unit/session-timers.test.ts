import { SessionTimers } from '../../src/relay/client/session-timers';
import { DeadlineQueue } from '../../src/relay/deadline-queue';

/** A session's timers, recording what they fire. */
class Recorded extends SessionTimers {
  readonly expiring: string[] = [];
  expired = 0;

  constructor(
    protected readonly deadlines: DeadlineQueue,
    protected readonly toleranceMs: number,
  ) {
    super();
  }

  protected onExpiring(expiresAt: string): void {
    this.expiring.push(expiresAt);
  }

  protected onExpired(): void {
    this.expired++;
  }
}

describe('SessionTimers', () => {
  let queue: DeadlineQueue;
  beforeEach(() => {
    jest.useFakeTimers({ now: Date.UTC(2026, 0, 1) });
    queue = new DeadlineQueue();
  });
  afterEach(() => jest.useRealTimers());

  it('warns 60 s before exp and expires at exp + tolerance', () => {
    const timers = new Recorded(queue, 5000);
    const exp = Date.now() + 10 * 60_000;
    timers.reschedule(exp);
    jest.advanceTimersByTime(9 * 60_000 - 1);
    expect(timers.expiring).toEqual([]);
    jest.advanceTimersByTime(1);
    expect(timers.expiring).toEqual([new Date(exp).toISOString()]);
    jest.advanceTimersByTime(60_000 + 4999);
    expect(timers.expired).toBe(0);
    jest.advanceTimersByTime(1);
    expect(timers.expired).toBe(1);
  });

  it('waits correctly for tokens beyond the 24.8-day setTimeout limit', () => {
    const timers = new Recorded(queue, 0);
    timers.reschedule(Date.now() + 30 * 86_400_000);
    jest.advanceTimersByTime(30 * 86_400_000 - 1);
    expect(timers.expired).toBe(0);
    jest.advanceTimersByTime(1);
    expect(timers.expired).toBe(1);
  });

  it('replaces both timers on reschedule and does nothing for tokens without exp', () => {
    const timers = new Recorded(queue, 0);
    timers.reschedule(Date.now() + 1000);
    timers.reschedule(null);
    jest.advanceTimersByTime(10_000);
    expect(timers.expired).toBe(0);
    expect(queue.size).toBe(0);
  });
});

it('keeps no function of its own per session (an idle socket would hold two closures)', () => {
  const timers = new Recorded(new DeadlineQueue(), 0);
  expect(Object.entries(timers).filter(([, value]) => typeof value === 'function')).toEqual([]);
});
