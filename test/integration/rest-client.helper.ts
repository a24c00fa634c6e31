import * as api from '../../src/client';
import { createClient, type Client } from '../../src/client/client';
import { mintToken, TEST_ADMIN_JWT_SECRET, type TokenClaims } from '../helpers/tokens';

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

/** An admin token (sub `root`, roles ADMIN) signed with the admin secret, as `npm run token -- --admin` makes. */
export function adminToken(claims: TokenClaims = {}): string {
  return mintToken({ sub: 'root', roles: ['ADMIN'], ...claims }, TEST_ADMIN_JWT_SECRET);
}

/** Creates an API key with `scopes` (for every bot unless `binding` names them) through the API and returns its secret. */
export async function createKey(
  url: string,
  scopes: api.ApiKeyScope[],
  binding: { agentIds: string[]; adminRecipient?: boolean } = { agentIds: ['*'] },
): Promise<string> {
  const res = await api.createApiKey({ client: bearerClient(url, adminToken()), body: { name: 'test key', scopes, ...binding } });
  if (res.response!.status !== 201 || !res.data)
    throw new Error(`createApiKey failed: ${res.response!.status} ${JSON.stringify(res.error)}`);
  return res.data.data.key;
}

/** Creates an API key through the API and returns its id and secret. */
export async function createKeyRecord(
  url: string,
  body: { scopes: api.ApiKeyScope[]; agentIds: string[]; adminRecipient?: boolean },
): Promise<{ id: string; key: string }> {
  const res = await api.createApiKey({ client: bearerClient(url, adminToken()), body: { name: 'test key', ...body } });
  if (res.response!.status !== 201 || !res.data)
    throw new Error(`createApiKey failed: ${res.response!.status} ${JSON.stringify(res.error)}`);
  return { id: res.data.data.id, key: res.data.data.key };
}
