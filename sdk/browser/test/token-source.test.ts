import { RelayChatError } from '../src/codes';
import { TokenSource } from '../src/token-source';

function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (err: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe('embed TokenSource', () => {
  afterEach(() => jest.useRealTimers());

  it('returns a fixed token as is and reports it as not refreshable', async () => {
    const source = new TokenSource('jwt');
    expect(source.refreshable).toBe(false);
    await expect(source.get()).resolves.toBe('jwt');
  });

  it('shares one pending getter call among concurrent requests', async () => {
    const pending = deferred<string>();
    const getter = jest.fn(() => pending.promise);
    const source = new TokenSource(getter);
    const requests = Array.from({ length: 10 }, () => source.get());
    expect(getter).toHaveBeenCalledTimes(1);
    pending.resolve('t1');
    await expect(Promise.all(requests)).resolves.toEqual(Array(10).fill('t1'));
  });

  it('calls the getter again once the previous call settled', async () => {
    let n = 0;
    const getter = jest.fn(async () => `t${++n}`);
    const source = new TokenSource(getter);
    await expect(source.get()).resolves.toBe('t1');
    await expect(source.get()).resolves.toBe('t2');
    expect(getter).toHaveBeenCalledTimes(2);
  });

  it('times out a hung getter with TOKEN_TIMEOUT, then calls it afresh', async () => {
    jest.useFakeTimers();
    const getter = jest
      .fn()
      .mockReturnValueOnce(new Promise<string>(() => {}))
      .mockResolvedValueOnce('fresh');
    const source = new TokenSource(getter, 5_000);
    const first = source.get();
    const shared = source.get();
    jest.advanceTimersByTime(4_999);
    expect(getter).toHaveBeenCalledTimes(1);
    jest.advanceTimersByTime(1);
    await expect(first).rejects.toMatchObject({ code: 'TOKEN_TIMEOUT' });
    await expect(shared).rejects.toBeInstanceOf(RelayChatError);
    await expect(source.get()).resolves.toBe('fresh');
    expect(getter).toHaveBeenCalledTimes(2);
  });

  it('turns rejections, synchronous throws and non-string results into TOKEN_FETCH_FAILED', async () => {
    const cases: Array<() => Promise<string>> = [
      () => Promise.reject(new Error('backend 500')),
      () => {
        throw new Error('sync');
      },
      () => Promise.resolve(''),
      () => Promise.resolve({ token: 'x' } as unknown as string),
    ];
    for (const getter of cases) {
      await expect(new TokenSource(getter).get()).rejects.toMatchObject({ code: 'TOKEN_FETCH_FAILED', retryable: true });
    }
    await expect(new TokenSource(() => Promise.reject(new Error('backend 500'))).get()).rejects.toThrow(/backend 500/);
  });

  it('rejects bad options at construction', () => {
    expect(() => new TokenSource('')).toThrow(TypeError);
    expect(() => new TokenSource(42 as unknown as string)).toThrow(TypeError);
    expect(() => new TokenSource('t', 0)).toThrow(/tokenTimeoutMs/);
  });
});
