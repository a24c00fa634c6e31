import { ADMIN_CLIENT_ID, ADMIN_ROLE } from '../protocol';

/** Who a verified client token speaks for. */
export interface ClientIdentity {
  /** Routing identity: `sub`, or `'admin'` for every ADMIN. */
  clientId: string;
  /** The token subject; dedupe, rate limits and deactivation key on it. */
  sub: string;
  /** For logs only. */
  email?: string;
  roles: string[];
  isAdmin: boolean;
  /** Bots the token may chat with; undefined = any. */
  agentIds?: string[];
  /** `exp` in epoch milliseconds, or null for a token without `exp`. */
  expiresAtMs: number | null;
  /**
   * Signed with ADMIN_JWT_SECRET (an operator's admin token), which the ADMIN REST routes require;
   * false for chat tokens, ADMIN ones included (those open admin chat sockets only).
   */
  adminAuthority: boolean;
}

/**
 * Whether `sub` reads as the admins' clientId: `admin` after trimming and case-folding (`"Admin"`,
 * `" ADMIN"`). Only ADMIN tokens may carry one; elsewhere it would pass for the admins in logs,
 * conversation logs and the integrator's tools.
 */
export function isReservedSub(sub: string): boolean {
  return sub.trim().toLowerCase() === ADMIN_CLIENT_ID;
}

export function identityFromClaims(claims: {
  sub: string;
  email?: string;
  roles: string[];
  agentIds?: string[];
  exp?: number;
}): ClientIdentity {
  const isAdmin = claims.roles.includes(ADMIN_ROLE);
  return {
    clientId: isAdmin ? ADMIN_CLIENT_ID : claims.sub,
    sub: claims.sub,
    email: claims.email,
    roles: claims.roles,
    isAdmin,
    agentIds: claims.agentIds,
    expiresAtMs: typeof claims.exp === 'number' ? claims.exp * 1000 : null,
    adminAuthority: false,
  };
}
