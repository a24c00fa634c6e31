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
 * Whether `sub` reads as the admins' clientId (docs/rest.md, reserved subjects). Only ADMIN tokens
 * may carry one; elsewhere it would pass for the admins in logs, conversation logs, the `from` bots
 * get and the integrator's tools. `sub` is compared by its {@link subjectSkeleton}, so `" Admin"`,
 * `"admin\u200b"`, `"ａｄｍｉｎ"`, `"ADMİN"` and a Cyrillic `"аdmin"` are all reserved.
 */
export function isReservedSub(sub: string): boolean {
  return subjectSkeleton(sub) === ADMIN_CLIENT_ID;
}

/** Control characters (`Cc`), format characters (`Cf`: joiners, marks of direction) and the rest of the default-ignorables, which render as nothing. */
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Default_Ignorable_Code_Point}]/gu;
/** Combining marks, once a letter is decomposed (`İ` → `I` + U+0307). */
const MARKS = /\p{M}/gu;

/**
 * Letters of other scripts drawn like the Latin ones of `admin`, from Unicode's confusables
 * (UTS #39) for `a`, `d`, `m`, `i` and `n`, lower case (the skeleton is lowered first). The full
 * table maps thousands of characters to every Latin letter; only the reserved name needs these.
 */
const LOOK_ALIKES: Record<string, string> = {
  '\u0430': 'a', // Cyrillic а
  '\u03b1': 'a', // Greek α
  '\u0251': 'a', // Latin alpha ɑ
  '\u237a': 'a', // APL alpha ⍺
  '\u0501': 'd', // Cyrillic komi de ԁ
  '\u13e7': 'd', // Cherokee Ꮷ
  '\u146f': 'd', // Canadian syllabics ᑯ
  '\ua4d2': 'd', // Lisu ꓒ
  '\u043c': 'm', // Cyrillic м (small-capital form)
  '\u1d0d': 'm', // small capital ᴍ
  '\u0131': 'i', // dotless ı
  '\u0456': 'i', // Cyrillic і
  '\u03b9': 'i', // Greek ι
  '\u0269': 'i', // Latin iota ɩ
  '\u04cf': 'i', // Cyrillic palochka ӏ
  '\u13a5': 'i', // Cherokee Ꭵ
  '\u0578': 'n', // Armenian ո
  '\u057c': 'n', // Armenian ռ
  '\u0274': 'n', // small capital ɴ
};
const LOOK_ALIKE = new RegExp(`[${Object.keys(LOOK_ALIKES).join('')}]`, 'gu');

/**
 * What `sub` looks like, for comparing it with reserved names: invisible characters removed,
 * compatibility forms folded (NFKC: fullwidth, mathematical and circled letters), lower-cased,
 * decomposed without its combining marks, look-alike letters of other scripts mapped to the Latin
 * ones, and trimmed. `"josé"` and `"Łukasz"` stay what they are as subjects; only their skeleton
 * is compared.
 */
export function subjectSkeleton(sub: string): string {
  return sub
    .replace(INVISIBLE, '')
    .normalize('NFKC')
    .toLowerCase()
    .normalize('NFD')
    .replace(MARKS, '')
    .replace(LOOK_ALIKE, (c) => LOOK_ALIKES[c])
    .replace(INVISIBLE, '')
    .trim();
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
