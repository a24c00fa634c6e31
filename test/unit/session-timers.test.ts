import { SessionTimers } from '../../src/relay/client/session-timers';
import { DeadlineQueue } from '../../src/relay/deadline-queue';

describe('SessionTimers', () => {
  let queue: DeadlineQueue;
  beforeEach(() => {
    jest.useFakeTimers({ now: Date.UTC(2026, 0, 1) });
    queue = new DeadlineQueue();
  });
  afterEach(() => jest.useRealTimers());

  it('warns 60 s before exp and expires at exp + tolerance', () => {
    const expiring = jest.fn();
    const expired = jest.fn();
    const timers = new SessionTimers(queue, 5000, expiring, expired);
    const exp = Date.now() + 10 * 60_000;
    timers.reschedule(exp);
    jest.advanceTimersByTime(9 * 60_000 - 1);
    expect(expiring).not.toHaveBeenCalled();
    jest.advanceTimersByTime(1);
    expect(expiring).toHaveBeenCalledWith(new Date(exp).toISOString());
    jest.advanceTimersByTime(60_000 + 4999);
    expect(expired).not.toHaveBeenCalled();
    jest.advanceTimersByTime(1);
    expect(expired).toHaveBeenCalledTimes(1);
  });

  it('waits correctly for tokens beyond the 24.8-day setTimeout limit', () => {
    const expired = jest.fn();
    const timers = new SessionTimers(queue, 0, () => {}, expired);
    timers.reschedule(Date.now() + 30 * 86_400_000);
    jest.advanceTimersByTime(30 * 86_400_000 - 1);
    expect(expired).not.toHaveBeenCalled();
    jest.advanceTimersByTime(1);
    expect(expired).toHaveBeenCalledTimes(1);
  });

  it('replaces both timers on reschedule and does nothing for tokens without exp', () => {
    const expired = jest.fn();
    const timers = new SessionTimers(queue, 0, () => {}, expired);
    timers.reschedule(Date.now() + 1000);
    timers.reschedule(null);
    jest.advanceTimersByTime(10_000);
    expect(expired).not.toHaveBeenCalled();
  });
});
