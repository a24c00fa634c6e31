import type { Request } from 'express';
import type { ClientIdentity } from '../auth/identity';
import type { ApiKeyRecord } from '../store/store';

/** Who made an authenticated REST request; tsoa stores it as `req.user`. */
export type Principal = { scheme: 'defaultBearerAuth'; identity: ClientIdentity } | { scheme: 'api-key'; apiKey: ApiKeyRecord };

/** Security scheme names of the spec. */
export const BEARER = 'defaultBearerAuth';
export const API_KEY = 'api-key';

/** The principal tsoa's authentication put on the request. */
export function principalOf(req: Request): Principal {
  const user = (req as Request & { user?: Principal }).user;
  if (!user) throw new Error('no authenticated principal on this request');
  return user;
}

/** The verified bearer identity of the request. */
export function identityOf(req: Request): ClientIdentity {
  const principal = principalOf(req);
  if (principal.scheme !== BEARER) throw new Error('request was not authenticated with a bearer token');
  return principal.identity;
}
