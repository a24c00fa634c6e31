import { Emitter } from '../src/emitter';

class TestEmitter extends Emitter<{ ping: number; pong: string }> {
  fire<K extends 'ping' | 'pong'>(event: K, payload: { ping: number; pong: string }[K]) {
    this.emit(event, payload);
  }
}

describe('embed Emitter', () => {
  it('calls listeners of the emitted event only, and on() returns an unsubscribe', () => {
    const emitter = new TestEmitter();
    const pings: number[] = [];
    const pongs: string[] = [];
    const off = emitter.on('ping', (n) => pings.push(n));
    emitter.on('pong', (s) => pongs.push(s));
    emitter.fire('ping', 1);
    off();
    emitter.fire('ping', 2);
    emitter.fire('pong', 'x');
    expect(pings).toEqual([1]);
    expect(pongs).toEqual(['x']);
  });

  it('keeps calling other listeners when one throws, and reports the exception on a later task', async () => {
    jest.useFakeTimers();
    try {
      const emitter = new TestEmitter();
      const calls: string[] = [];
      emitter.on('ping', () => {
        throw new Error('listener bug');
      });
      emitter.on('ping', () => calls.push('second'));
      expect(() => emitter.fire('ping', 1)).not.toThrow();
      expect(calls).toEqual(['second']);
      expect(() => jest.runOnlyPendingTimers()).toThrow('listener bug');
    } finally {
      jest.useRealTimers();
    }
  });

  it('off() removes a listener; emitting without listeners is a no-op', () => {
    const emitter = new TestEmitter();
    const listener = jest.fn();
    emitter.on('pong', listener);
    emitter.off('pong', listener);
    expect(() => emitter.fire('pong', 'x')).not.toThrow();
    expect(() => emitter.fire('ping', 0)).not.toThrow();
    expect(listener).not.toHaveBeenCalled();
  });
});
