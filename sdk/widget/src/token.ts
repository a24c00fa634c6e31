import type { TokenOption } from '../../browser/src';

/** Where the widget's token comes from: the first of these that is set wins. */
export interface TokenSources {
  getToken?: () => string | Promise<string>;
  token?: string | null;
  tokenUrl?: string | null;
}

/**
 * The token option for the browser SDK. A `token-url` is fetched again (GET, with the page's
 * credentials) before every connect; the integrator's backend answers `{ "token": "…" }`.
 */
export function tokenOption(from: TokenSources): TokenOption | undefined {
  if (typeof from.getToken === 'function') {
    const get = from.getToken;
    return async () => get();
  }
  if (from.token) return from.token;
  const url = from.tokenUrl;
  if (!url) return undefined;
  return async () => {
    const res = await fetch(url, { credentials: 'include', headers: { accept: 'application/json' } });
    if (!res.ok) throw new Error(`token-url answered ${res.status}`);
    const body = (await res.json()) as { token?: unknown; data?: { token?: unknown } };
    const token = body.token ?? body.data?.token;
    if (typeof token !== 'string' || !token) throw new Error('token-url answered without a token');
    return token;
  };
}
