import * as api from '../../src/client';
import { createClient, type Client } from '../../src/client/client';
import { mintToken, type TokenClaims } from '../helpers/tokens';

/** The generated REST client (one function per operationId) and client factories for tests. */
export { api };

/** A client of the hub at `url` sending `Authorization: Bearer <token>`. */
export function bearerClient(url: string, token: string): Client {
  return createClient({ baseUrl: url, headers: { authorization: `Bearer ${token}` } });
}

/** A client of the hub at `url` sending the `api-key` header. */
export function apiKeyClient(url: string, key: string): Client {
  return createClient({ baseUrl: url, headers: { 'api-key': key } });
}

export function anonymousClient(url: string): Client {
  return createClient({ baseUrl: url });
}

/** An ADMIN client token (sub `root`). */
export function adminToken(claims: TokenClaims = {}): string {
  return mintToken({ sub: 'root', roles: ['ADMIN'], ...claims });
}

/** Creates an API key with `scopes` through the API and returns its secret. */
export async function createKey(url: string, scopes: ('embed:mint' | 'messages:publish')[]): Promise<string> {
  const res = await api.createApiKey({ client: bearerClient(url, adminToken()), body: { name: 'test key', scopes } });
  if (res.response!.status !== 201 || !res.data) throw new Error(`createApiKey failed: ${res.response!.status} ${JSON.stringify(res.error)}`);
  return res.data.data.key;
}
