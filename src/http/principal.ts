import type { Request } from 'express';
import { agentAllowed, keyAgentPatterns } from '../auth/agent-patterns';
import type { ClientIdentity } from '../auth/identity';
import type { ApiKeyRecord } from '../store/store';
import { ForbiddenError } from './errors';

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

/** The verified API key of the request. */
export function apiKeyOf(req: Request): ApiKeyRecord {
  const principal = principalOf(req);
  if (principal.scheme !== API_KEY) throw new Error('request was not authenticated with an API key');
  return principal.apiKey;
}

/**
 * Refuses (403 `AGENT_NOT_ALLOWED`) an API key that does not act for `agentId`, before anything is
 * read or changed. Bearer principals reach here only as ADMIN tokens, which act for every bot.
 */
export function assertActsFor(principal: Principal, agentId: string, action: string): void {
  if (principal.scheme !== API_KEY) return;
  if (!agentAllowed(keyAgentPatterns(principal.apiKey), agentId)) {
    throw new ForbiddenError('AGENT_NOT_ALLOWED', `This API key may not ${action} the bot "${agentId}".`);
  }
}
