import jwt from 'jsonwebtoken';
import { JwtService } from '../../src/auth/jwt.service';

export const TEST_JWT_SECRET = 'test-secret-that-is-long-enough-for-hs256!!';
export const TEST_ADMIN_JWT_SECRET = 'test-admin-secret-apart-from-the-chat-one!!';
export const TEST_AGENT_KEY = 'test-agent-key-0123456789';

export interface TokenClaims {
  sub?: unknown;
  email?: string;
  roles?: unknown;
  agentIds?: unknown;
  /** Seconds from now; default 3600. `null` omits `exp`. */
  expiresIn?: number | null;
  iss?: string;
  aud?: string;
}

/** Signs a client token the way an integrator's backend would. */
export function mintToken(claims: TokenClaims = {}, secret = TEST_JWT_SECRET, algorithm: jwt.Algorithm = 'HS256'): string {
  const { expiresIn = 3600, ...rest } = claims;
  const now = Math.floor(Date.now() / 1000);
  const body: Record<string, unknown> = { ...rest, iat: now };
  if (expiresIn !== null) body.exp = now + expiresIn;
  return jwt.sign(body, secret, { algorithm });
}

/** Verifies tokens the way a hub started by `startHub` does. */
export function testJwtService(): JwtService {
  return new JwtService({
    JWT_SECRET: TEST_JWT_SECRET,
    ADMIN_JWT_SECRET: TEST_ADMIN_JWT_SECRET,
    JWT_PREVIOUS_SECRETS: [],
    JWT_ALGORITHMS: ['HS256'],
    JWT_ISSUER: null,
    JWT_AUDIENCE: null,
    JWT_CLOCK_TOLERANCE_S: 5,
    JWT_REQUIRE_EXP: true,
  });
}
