import type { Request } from 'express';
import { ADMIN_ROLE } from '../relay/protocol';
import { FAILURE_WINDOW_S } from '../relay/auth-failure-limiter';
import { ForbiddenError, RateLimitedError, UnauthorizedError } from './errors';
import { servicesOf, type HttpServices } from './http.services';
import { API_KEY, BEARER, type Principal } from './principal';

/** `Bearer <token>`, the token captured. */
export const BEARER_PREFIX = /^Bearer\s+(\S+)\s*$/i;

/**
 * tsoa's authentication module. `defaultBearerAuth`: a client JWT verified with the same rules as
 * the `/ws/client` handshake (401 with the handshake's code), scopes are roles (`ADMIN` → else 403),
 * and a deactivated `sub` is refused (403). `api-key`: the `api-key` header matched by hash in
 * constant time (401), scopes the key must carry (403).
 *
 * Every 401 counts against the caller's per-IP budget of failed authentications, the one the
 * socket handshakes use; the failure that goes past it, and anything the address sends until the
 * window passes, gets 429.
 */
export async function expressAuthentication(req: Request, securityName: string, scopes: string[] = []): Promise<Principal> {
  const services = servicesOf(req);
  const ip = services.clientIp(req);
  if (await services.authFailures.isLimited(ip)) throw tooManyFailures();
  try {
    return await authenticate(req, services, securityName, scopes);
  } catch (err) {
    if (err instanceof UnauthorizedError && (await services.authFailures.recordFailure(ip))) throw tooManyFailures();
    throw err;
  }
}

function tooManyFailures(): RateLimitedError {
  return new RateLimitedError(FAILURE_WINDOW_S, 'Too many failed authentications from this address; retry later.');
}

async function authenticate(req: Request, services: HttpServices, securityName: string, scopes: string[]): Promise<Principal> {
  if (securityName === BEARER) {
    const header = req.headers.authorization;
    const token = header === undefined ? undefined : BEARER_PREFIX.exec(header)?.[1];
    if (header !== undefined && token === undefined) {
      throw new UnauthorizedError('TOKEN_INVALID', 'The Authorization header must be "Bearer <token>".');
    }
    const result = services.jwt.verify(token);
    if (!result.ok) throw new UnauthorizedError(result.code, tokenDetail(result.code));
    const { identity } = result;
    for (const scope of scopes) {
      if (scope === ADMIN_ROLE ? !identity.isAdmin : !identity.roles.includes(scope)) {
        throw new ForbiddenError('ROLE_REQUIRED', `This operation needs the ${scope} role.`);
      }
    }
    if (await services.store.deactivations.isDeactivated(identity.sub)) {
      throw new ForbiddenError('USER_DEACTIVATED', 'This user is deactivated.');
    }
    return { scheme: BEARER, identity };
  }
  if (securityName === API_KEY) {
    const presented = req.headers[API_KEY];
    if (typeof presented !== 'string' || presented.length === 0) {
      throw new UnauthorizedError('API_KEY_REQUIRED', 'Send the key in the "api-key" header.');
    }
    const apiKey = await services.apiKeys.authenticate(presented);
    if (!apiKey) throw new UnauthorizedError('API_KEY_INVALID', 'The API key is unknown or was deleted.');
    const missing = scopes.filter((s) => !apiKey.scopes.includes(s));
    if (missing.length > 0) {
      throw new ForbiddenError('SCOPE_REQUIRED', `This operation needs an API key with the scope ${missing.join(', ')}.`);
    }
    return { scheme: API_KEY, apiKey };
  }
  throw new Error(`unknown security scheme ${securityName}`);
}

function tokenDetail(code: string): string {
  switch (code) {
    case 'TOKEN_REQUIRED':
      return 'Send a bearer token in the Authorization header.';
    case 'TOKEN_EXPIRED':
      return 'The token has expired.';
    case 'SUB_REQUIRED':
      return 'The token has no sub.';
    case 'SUB_RESERVED':
      return 'sub "admin" is reserved for ADMIN tokens.';
    default:
      return 'The token could not be verified.';
  }
}
