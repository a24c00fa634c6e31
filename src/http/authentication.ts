import type { Request } from 'express';
import { ADMIN_ROLE, OPERATOR_ROLE } from '../protocol';
import type { FailureLimited } from '../limits/auth-failure-limiter';
import { ForbiddenError, RateLimitedError, UnauthorizedError } from './errors';
import { servicesOf, type HttpServices } from './http-services';
import { API_KEY, BEARER, type Principal } from './principal';

/** `Bearer <token>`, the token captured. */
export const BEARER_PREFIX = /^Bearer\s+(\S+)\s*$/i;

/**
 * tsoa's authentication module. `defaultBearerAuth`: a client JWT verified with the same rules as
 * the `/ws/client` handshake (401 with the handshake's code), scopes are roles (`ADMIN` → else 403),
 * and a deactivated `sub` is refused (403). `api-key`: the `api-key` header matched by hash in
 * constant time (401), scopes the key must carry (403).
 *
 * Every 401 counts against the caller's budgets of failed authentications, the ones the socket
 * handshakes use (per address, and per address and verified identity): a credential that does not
 * verify from an address past its budget gets 429; a verified one gets its answer unless its own
 * identity is past its budget (see AuthFailureLimiter). `Retry-After` is when the budget frees up.
 */
export async function expressAuthentication(req: Request, securityName: string, scopes: string[] = []): Promise<Principal> {
  // An operation with both schemes as alternatives (conversation history) runs both; the one whose
  // credential was not sent steps aside at once, uncounted, so the answer is the other one's.
  if (otherSchemeOnly(req, securityName)) {
    throw securityName === BEARER
      ? new UnauthorizedError('TOKEN_REQUIRED', tokenDetail('TOKEN_REQUIRED'))
      : new UnauthorizedError('API_KEY_REQUIRED', 'Send the key in the "api-key" header.');
  }
  const services = servicesOf(req);
  const ip = services.clientIp(req);
  const addressLimited = await services.authFailures.addressLimited(ip);
  const attempt: { identity?: string } = {};
  let principal: Principal;
  try {
    principal = await authenticate(req, services, securityName, scopes, attempt);
  } catch (err) {
    if (err instanceof UnauthorizedError && countOnce(req)) {
      const limited = await services.authFailures.recordFailure(ip, attempt.identity);
      if (limited) throw tooManyFailures(limited);
    }
    throw err;
  }
  if (addressLimited) {
    const own = attempt.identity === undefined ? addressLimited : await services.authFailures.identityLimited(ip, attempt.identity);
    if (own) throw tooManyFailures(own);
  }
  return principal;
}

/** Marks a request whose failed authentication was counted (alternatives may fail twice). */
const FAILURE_COUNTED = Symbol('authFailureCounted');

function countOnce(req: Request): boolean {
  const marked = req as Request & { [FAILURE_COUNTED]?: true };
  if (marked[FAILURE_COUNTED]) return false;
  marked[FAILURE_COUNTED] = true;
  return true;
}

/** The request carries the other scheme's credential and none of this one's. */
function otherSchemeOnly(req: Request, securityName: string): boolean {
  const bearer = req.headers.authorization !== undefined;
  const apiKey = req.headers[API_KEY] !== undefined;
  return securityName === BEARER ? !bearer && apiKey : securityName === API_KEY && !apiKey && bearer;
}

function tooManyFailures(limited: FailureLimited): RateLimitedError {
  return new RateLimitedError(Math.ceil(limited.retryAfterMs / 1000), 'Too many failed authentications from this address; retry later.');
}

/** Authenticates `req`; sets `attempt.identity` as soon as a credential verified (for failure limits). */
async function authenticate(
  req: Request,
  services: HttpServices,
  securityName: string,
  scopes: string[],
  attempt: { identity?: string },
): Promise<Principal> {
  if (securityName === BEARER) {
    const header = req.headers.authorization;
    const token = header === undefined ? undefined : BEARER_PREFIX.exec(header)?.[1];
    if (header !== undefined && token === undefined) {
      throw new UnauthorizedError('AUTHORIZATION_MALFORMED', 'The Authorization header must be "Bearer <token>".');
    }
    const result = services.jwt.verify(token);
    const sub = result.ok ? result.identity.sub : result.sub;
    if (sub !== undefined) attempt.identity = `sub:${sub}`;
    if (!result.ok) throw new UnauthorizedError(result.code, tokenDetail(result.code));
    const { identity } = result;
    for (const scope of scopes) {
      // ADMIN means an admin token (ADMIN_JWT_SECRET), not a chat token that claims the role;
      // OPERATOR an admin or operator token (both signed with it: docs/handoff.md).
      if (
        scope === OPERATOR_ROLE
          ? identity.operator === undefined
          : scope === ADMIN_ROLE
            ? !identity.adminAuthority
            : !identity.roles.includes(scope)
      ) {
        throw new ForbiddenError('ROLE_REQUIRED', roleDetail(scope, identity.isAdmin));
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
    attempt.identity = `key:${apiKey.id}`;
    const missing = scopes.filter((s) => !apiKey.scopes.includes(s));
    if (missing.length > 0) {
      throw new ForbiddenError('SCOPE_REQUIRED', `This operation needs an API key with the scope ${missing.join(', ')}.`);
    }
    return { scheme: API_KEY, apiKey };
  }
  throw new Error(`unknown security scheme ${securityName}`);
}

function roleDetail(scope: string, chatAdmin: boolean): string {
  if (scope === OPERATOR_ROLE) return 'This operation needs an operator or admin token signed with ADMIN_JWT_SECRET.';
  if (scope !== ADMIN_ROLE) return `This operation needs the ${scope} role.`;
  return chatAdmin
    ? 'This operation needs an admin token signed with ADMIN_JWT_SECRET; an ADMIN chat token signed with JWT_SECRET only opens admin chat sessions.'
    : 'This operation needs an admin token signed with ADMIN_JWT_SECRET.';
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
      return 'sub "admin" (in any case, spaces around it too) is reserved for ADMIN tokens.';
    default:
      return 'The token could not be verified.';
  }
}
