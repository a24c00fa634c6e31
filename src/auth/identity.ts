import { ADMIN_CLIENT_ID, ADMIN_ROLE, OPERATOR_ROLE } from '../protocol';
import { agentAllowed } from './agent-patterns';

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
  /**
   * Set for tokens signed with ADMIN_JWT_SECRET that may act as an operator (docs/handoff.md): ADMIN
   * ones for every bot (`agentIds` null), OPERATOR ones for the bots of their `agentIds` claim.
   * `name` is what users see: the `name` claim, else `sub`.
   */
  operator?: OperatorGrant;
}

/** What an operator token lets its holder do: answer users of these bots (null: every bot) as `name`. */
export interface OperatorGrant {
  name: string;
  agentIds: readonly string[] | null;
}

/** Whether `identity` may act as an operator for `agentId`. */
export function operatesFor(identity: ClientIdentity, agentId: string): boolean {
  const grant = identity.operator;
  return grant !== undefined && (grant.agentIds === null || agentAllowed(grant.agentIds, agentId));
}

/** Whether the identity's token is an operator token (OPERATOR, not ADMIN): it opens the console only, never a chat. */
export function isOperatorOnly(identity: ClientIdentity): boolean {
  return identity.operator !== undefined && !identity.isAdmin;
}

/** The operator grant of a token signed with ADMIN_JWT_SECRET, from its claims; undefined for other tokens. */
export function operatorGrantOf(claims: {
  sub: string;
  name?: string;
  roles: readonly string[];
  agentIds?: readonly string[];
}): OperatorGrant | undefined {
  const name = claims.name !== undefined && claims.name.trim() !== '' ? claims.name : claims.sub;
  if (claims.roles.includes(ADMIN_ROLE)) return { name, agentIds: null };
  if (claims.roles.includes(OPERATOR_ROLE)) return { name, agentIds: claims.agentIds ?? [] };
  return undefined;
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
