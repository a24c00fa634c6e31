import { RelayChatError } from './codes';
import { badOption, positive } from './checks';

/** A client JWT, or a function that fetches a fresh one (typically from the integrator's backend). */
export type TokenOption = string | (() => Promise<string>);

export const DEFAULT_TOKEN_TIMEOUT_MS = 10_000;

/**
 * Hands out tokens for handshakes and in-band refreshes. A getter is called on every request, but
 * concurrent requests share one pending call, and a call that outlives `timeoutMs` is abandoned so
 * a hung backend cannot stall the reconnect loop.
 */
export class TokenSource {
  private pending: Promise<string> | undefined;

  constructor(
    private readonly token: TokenOption,
    private readonly timeoutMs = DEFAULT_TOKEN_TIMEOUT_MS,
  ) {
    if (typeof token !== 'function' && (typeof token !== 'string' || token === '')) {
      throw badOption('token', 'a non-empty string or a function returning a Promise of one');
    }
    positive(timeoutMs, timeoutMs, 'tokenTimeoutMs');
  }

  /** True when the token comes from a getter, so asking again may yield a fresh one. */
  get refreshable(): boolean {
    return typeof this.token === 'function';
  }

  /** Resolves to a token; rejects with a {@link RelayChatError} (`TOKEN_FETCH_FAILED`, `TOKEN_TIMEOUT`). */
  get(): Promise<string> {
    if (typeof this.token === 'string') return Promise.resolve(this.token);
    return (this.pending ??= this.fetch(this.token).finally(() => {
      this.pending = undefined;
    }));
  }

  private fetch(getter: () => Promise<string>): Promise<string> {
    return new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new RelayChatError('TOKEN_TIMEOUT', `token getter did not settle within ${this.timeoutMs} ms`, true));
      }, this.timeoutMs);
      // Calling inside a promise turns a synchronous throw of the getter into a rejection.
      new Promise<string>((inner) => inner(getter())).then(
        (value) => {
          clearTimeout(timer);
          if (typeof value === 'string' && value !== '') resolve(value);
          else reject(new RelayChatError('TOKEN_FETCH_FAILED', 'token getter resolved to no token', true));
        },
        (err: unknown) => {
          clearTimeout(timer);
          const reason = err instanceof Error ? err.message : String(err);
          reject(new RelayChatError('TOKEN_FETCH_FAILED', `token getter failed: ${reason}`, true));
        },
      );
    });
  }
}
