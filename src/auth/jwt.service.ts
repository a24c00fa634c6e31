import jwt, { type Algorithm, type JwtPayload } from 'jsonwebtoken';
import { ADMIN_CLIENT_ID, ADMIN_ROLE } from '../relay/protocol';
import { identityFromClaims, type ClientIdentity } from './identity';

export interface JwtSettings {
  JWT_SECRET: string;
  JWT_PREVIOUS_SECRETS: readonly string[];
  JWT_ALGORITHMS: readonly Algorithm[];
  JWT_ISSUER: string | null;
  JWT_AUDIENCE: string | null;
  JWT_CLOCK_TOLERANCE_S: number;
  JWT_REQUIRE_EXP: boolean;
}

/** Why a token was refused; the same codes appear in handshake errors and REST 401s. */
export type TokenFailure = 'TOKEN_REQUIRED' | 'TOKEN_INVALID' | 'TOKEN_EXPIRED' | 'SUB_REQUIRED' | 'SUB_RESERVED';

export type TokenResult = { ok: true; identity: ClientIdentity } | { ok: false; code: TokenFailure };

export interface MintClaims {
  sub: string;
  email?: string;
  roles?: string[];
  agentIds?: string[];
}

/**
 * Verifies and signs client JWTs. Verification pins the configured algorithms (no `none`, no
 * algorithm confusion), tries the current secret and then each previous one (rotation), and
 * checks the claims the relay relies on.
 */
export class JwtService {
  private readonly secrets: string[];

  constructor(private readonly settings: JwtSettings) {
    this.secrets = [settings.JWT_SECRET, ...settings.JWT_PREVIOUS_SECRETS];
  }

  verify(token: unknown): TokenResult {
    if (typeof token !== 'string' || token.length === 0) return { ok: false, code: 'TOKEN_REQUIRED' };
    const payload = this.verifySignature(token);
    if (typeof payload === 'string') return { ok: false, code: payload };

    if (this.settings.JWT_REQUIRE_EXP && typeof payload.exp !== 'number') return { ok: false, code: 'TOKEN_INVALID' };
    const roles = payload.roles ?? [];
    if (!isStringArray(roles)) return { ok: false, code: 'TOKEN_INVALID' };
    const agentIds = payload.agentIds;
    if (agentIds !== undefined && !isStringArray(agentIds)) return { ok: false, code: 'TOKEN_INVALID' };
    const email = typeof payload.email === 'string' ? payload.email : undefined;

    const sub = payload.sub;
    if (typeof sub !== 'string' || sub.length === 0) return { ok: false, code: 'SUB_REQUIRED' };
    if (sub === ADMIN_CLIENT_ID && !roles.includes(ADMIN_ROLE)) return { ok: false, code: 'SUB_RESERVED' };

    return { ok: true, identity: identityFromClaims({ sub, email, roles, agentIds, exp: payload.exp }) };
  }

  /** Signs a token with the current secret and the first configured algorithm. */
  sign(claims: MintClaims, expiresInSeconds: number): { token: string; expiresAt: Date } {
    const nowS = Math.floor(Date.now() / 1000);
    const exp = nowS + expiresInSeconds;
    const body: Record<string, unknown> = { sub: claims.sub, iat: nowS, exp };
    if (claims.email !== undefined) body.email = claims.email;
    if (claims.roles !== undefined && claims.roles.length > 0) body.roles = claims.roles;
    if (claims.agentIds !== undefined) body.agentIds = claims.agentIds;
    if (this.settings.JWT_ISSUER) body.iss = this.settings.JWT_ISSUER;
    if (this.settings.JWT_AUDIENCE) body.aud = this.settings.JWT_AUDIENCE;
    const token = jwt.sign(body, this.settings.JWT_SECRET, { algorithm: this.settings.JWT_ALGORITHMS[0] });
    return { token, expiresAt: new Date(exp * 1000) };
  }

  private verifySignature(token: string): JwtPayload | TokenFailure {
    for (const secret of this.secrets) {
      try {
        const payload = jwt.verify(token, secret, {
          algorithms: [...this.settings.JWT_ALGORITHMS],
          issuer: this.settings.JWT_ISSUER ?? undefined,
          audience: this.settings.JWT_AUDIENCE ?? undefined,
          clockTolerance: this.settings.JWT_CLOCK_TOLERANCE_S,
        });
        if (typeof payload === 'string') return 'TOKEN_INVALID';
        return payload;
      } catch (err) {
        // An expired token whose signature checked out is expired, whichever secret signed it.
        if (err instanceof jwt.TokenExpiredError) return 'TOKEN_EXPIRED';
      }
    }
    return 'TOKEN_INVALID';
  }
}

function isStringArray(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((v) => typeof v === 'string');
}
