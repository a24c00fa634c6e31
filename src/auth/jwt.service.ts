import jwt, { type Algorithm, type JwtPayload } from 'jsonwebtoken';
import { ADMIN_ROLE, OPERATOR_ROLE } from '../protocol';
import { identityFromClaims, isReservedSub, operatorGrantOf, type ClientIdentity } from './identity';

export interface JwtSettings {
  JWT_SECRET: string;
  /** Signs and verifies admin tokens, the only ones the ADMIN REST routes accept; null = none. */
  ADMIN_JWT_SECRET?: string | null;
  JWT_PREVIOUS_SECRETS: readonly string[];
  JWT_ALGORITHMS: readonly Algorithm[];
  JWT_ISSUER: string | null;
  JWT_AUDIENCE: string | null;
  JWT_CLOCK_TOLERANCE_S: number;
  JWT_REQUIRE_EXP: boolean;
}

/** Why a token was refused; the same codes appear in handshake errors and REST 401s. */
export type TokenFailure = 'TOKEN_REQUIRED' | 'TOKEN_INVALID' | 'TOKEN_EXPIRED' | 'SUB_REQUIRED' | 'SUB_RESERVED';

/**
 * `sub` on a failure is set when the signature verified (an expired token, a claim the relay
 * refuses): the holder is known, so failure limits can count against that identity.
 */
export type TokenResult = { ok: true; identity: ClientIdentity } | { ok: false; code: TokenFailure; sub?: string };

export interface MintClaims {
  sub: string;
  email?: string;
  roles?: string[];
  agentIds?: string[];
  /** The name users see for an operator (docs/handoff.md). */
  name?: string;
}

/** Which secret verified a token. */
type Signer = 'chat' | 'admin';

/**
 * Verifies and signs client JWTs. Verification pins the configured algorithms (no `none`, no
 * algorithm confusion), tries the current secret and then each previous one (rotation), and
 * checks the claims the relay relies on.
 *
 * Two signers: JWT_SECRET (held by the integrator's backend) signs chat tokens, ADMIN included
 * for admin chat sockets (docs/protocol.md, "Connecting"); ADMIN_JWT_SECRET (held by operators) signs admin tokens,
 * which must carry the ADMIN role, and operator tokens (role OPERATOR and an `agentIds` claim,
 * docs/handoff.md). Only admin tokens get `adminAuthority`, which the ADMIN REST routes require, so a
 * backend that signs chat tokens cannot administer the hub; both get an `operator` grant.
 */
export class JwtService {
  private readonly secrets: { secret: string; signer: Signer }[];

  constructor(private readonly settings: JwtSettings) {
    this.secrets = [settings.JWT_SECRET, ...settings.JWT_PREVIOUS_SECRETS].map((secret) => ({ secret, signer: 'chat' as const }));
    if (settings.ADMIN_JWT_SECRET) this.secrets.push({ secret: settings.ADMIN_JWT_SECRET, signer: 'admin' });
  }

  /** Whether admin tokens can be signed and verified (ADMIN_JWT_SECRET is set). */
  get adminTokensEnabled(): boolean {
    return Boolean(this.settings.ADMIN_JWT_SECRET);
  }

  verify(token: unknown): TokenResult {
    if (typeof token !== 'string' || token.length === 0) return { ok: false, code: 'TOKEN_REQUIRED' };
    const verified = this.verifySignature(token);
    if (typeof verified === 'string') {
      if (verified !== 'TOKEN_EXPIRED') return { ok: false, code: verified };
      const claims = jwt.decode(token, { json: true });
      const claimed = claims?.sub;
      const known = typeof claimed === 'string' && claimed !== '' ? { sub: claimed } : {};
      // Expired by a time no Date can hold is not a token of ours, not an expired one to renew.
      return { ok: false, code: claims && timesInRange(claims) ? verified : 'TOKEN_INVALID', ...known };
    }
    const { payload, signer } = verified;
    const signed = typeof payload.sub === 'string' && payload.sub !== '' ? { sub: payload.sub } : {};

    if (!timesInRange(payload)) return { ok: false, code: 'TOKEN_INVALID', ...signed };
    if (this.settings.JWT_REQUIRE_EXP && typeof payload.exp !== 'number') return { ok: false, code: 'TOKEN_INVALID', ...signed };
    const roles: unknown = payload.roles ?? [];
    if (!isStringArray(roles)) return { ok: false, code: 'TOKEN_INVALID', ...signed };
    const agentIds: unknown = payload.agentIds;
    if (agentIds !== undefined && !isStringArray(agentIds)) return { ok: false, code: 'TOKEN_INVALID', ...signed };
    const email = typeof payload.email === 'string' ? payload.email : undefined;
    const name: unknown = payload.name;
    if (name !== undefined && typeof name !== 'string') return { ok: false, code: 'TOKEN_INVALID', ...signed };

    const sub = payload.sub;
    if (typeof sub !== 'string' || sub.length === 0) return { ok: false, code: 'SUB_REQUIRED' };
    if (isReservedSub(sub) && !roles.includes(ADMIN_ROLE)) return { ok: false, code: 'SUB_RESERVED', sub };
    // The admin secret signs admin and operator tokens only: anything else under it is not a token
    // of ours, nor an operator token without the bots it is limited to.
    const admin = roles.includes(ADMIN_ROLE);
    if (signer === 'admin' && !admin && !(roles.includes(OPERATOR_ROLE) && agentIds !== undefined)) {
      return { ok: false, code: 'TOKEN_INVALID', sub };
    }

    const identity = identityFromClaims({ sub, email, roles, agentIds, exp: payload.exp });
    if (signer !== 'admin') return { ok: true, identity };
    const operator = operatorGrantOf({ sub, roles, agentIds, ...(name === undefined ? {} : { name }) });
    return { ok: true, identity: { ...identity, adminAuthority: admin, ...(operator ? { operator } : {}) } };
  }

  /** Signs a chat token with JWT_SECRET and the first configured algorithm. */
  sign(claims: MintClaims, expiresInSeconds: number): { token: string; expiresAt: Date } {
    return this.signWith(this.settings.JWT_SECRET, claims, expiresInSeconds);
  }

  /** Signs an admin token (roles ADMIN) with ADMIN_JWT_SECRET; throws when it is not set. */
  signAdmin(claims: Omit<MintClaims, 'roles'>, expiresInSeconds: number): { token: string; expiresAt: Date } {
    const secret = this.settings.ADMIN_JWT_SECRET;
    if (!secret) throw new Error('ADMIN_JWT_SECRET is not set: admin tokens cannot be signed');
    return this.signWith(secret, { ...claims, roles: [ADMIN_ROLE] }, expiresInSeconds);
  }

  /**
   * Signs an operator token (roles OPERATOR) with ADMIN_JWT_SECRET, limited to `agentIds`; throws
   * when it is not set (docs/handoff.md).
   */
  signOperator(claims: { sub: string; name?: string; agentIds: string[] }, expiresInSeconds: number): { token: string; expiresAt: Date } {
    const secret = this.settings.ADMIN_JWT_SECRET;
    if (!secret) throw new Error('ADMIN_JWT_SECRET is not set: operator tokens cannot be signed');
    return this.signWith(secret, { ...claims, roles: [OPERATOR_ROLE] }, expiresInSeconds);
  }

  private signWith(secret: string, claims: MintClaims, expiresInSeconds: number): { token: string; expiresAt: Date } {
    const nowS = Math.floor(Date.now() / 1000);
    const exp = nowS + expiresInSeconds;
    const body: Record<string, unknown> = { sub: claims.sub, iat: nowS, exp };
    if (claims.email !== undefined) body.email = claims.email;
    if (claims.roles !== undefined && claims.roles.length > 0) body.roles = claims.roles;
    if (claims.agentIds !== undefined) body.agentIds = claims.agentIds;
    if (claims.name !== undefined) body.name = claims.name;
    if (this.settings.JWT_ISSUER) body.iss = this.settings.JWT_ISSUER;
    if (this.settings.JWT_AUDIENCE) body.aud = this.settings.JWT_AUDIENCE;
    const token = jwt.sign(body, secret, { algorithm: this.settings.JWT_ALGORITHMS[0] });
    return { token, expiresAt: new Date(exp * 1000) };
  }

  private verifySignature(token: string): { payload: JwtPayload; signer: Signer } | TokenFailure {
    for (const { secret, signer } of this.secrets) {
      try {
        const payload = jwt.verify(token, secret, {
          algorithms: [...this.settings.JWT_ALGORITHMS],
          issuer: this.settings.JWT_ISSUER ?? undefined,
          audience: this.settings.JWT_AUDIENCE ?? undefined,
          clockTolerance: this.settings.JWT_CLOCK_TOLERANCE_S,
        });
        if (typeof payload === 'string') return 'TOKEN_INVALID';
        return { payload, signer };
      } catch (err) {
        // An expired token whose signature checked out is expired, whichever secret signed it.
        if (err instanceof jwt.TokenExpiredError) return 'TOKEN_EXPIRED';
      }
    }
    return 'TOKEN_INVALID';
  }
}

/** Seconds either side of the epoch a Date can hold (±8.64e15 ms). */
const MAX_JWT_TIME_S = 8.64e12;

/**
 * Whether `exp`, `iat` and `nbf`, where present, are finite numbers a Date can hold. The library
 * checks only that `exp` and `nbf` are numbers, and uses `iat` for nothing here; beyond the Date
 * range every later use of the expiry (ISO strings, timers) would throw.
 */
function timesInRange(payload: JwtPayload): boolean {
  return [payload.exp, payload.iat, payload.nbf].every(
    (time: unknown) => time === undefined || (typeof time === 'number' && Number.isFinite(time) && Math.abs(time) <= MAX_JWT_TIME_S),
  );
}

function isStringArray(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((v) => typeof v === 'string');
}
