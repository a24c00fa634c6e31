import type { JwtAlgorithm } from '../config.formats';

/** Who may connect and call the REST API: agent keys and JWT verification. */
export const authSchema = {
  AGENT_API_KEYS: {
    doc: 'Comma-separated API keys accepted at the /ws/agent handshake (several for rotation). Generated outside production when unset and no REDIS_URL.',
    format: 'secret-list',
    default: null as string[] | null,
    env: 'AGENT_API_KEYS',
    sensitive: true,
  },
  AGENT_SHARED_KEYS_ENABLED: {
    doc: 'Whether the shared AGENT_API_KEYS are accepted at /ws/agent (they serve any bot). Set false to accept only managed keys with the agent:connect scope, each bound to its agentIds; AGENT_API_KEYS is then not required.',
    format: 'strict-boolean',
    default: true,
    env: 'AGENT_SHARED_KEYS_ENABLED',
  },
  JWT_SECRET: {
    doc: 'HMAC secret that signs and verifies client JWTs (≥ 32 chars). Generated outside production when unset and no REDIS_URL.',
    format: 'secret',
    default: null as string | null,
    env: 'JWT_SECRET',
    sensitive: true,
  },
  ADMIN_JWT_SECRET: {
    doc: 'HMAC secret of admin tokens (≥ 32 chars, different from JWT_SECRET), held by operators: the ADMIN REST routes (users, API keys, agents) accept only tokens it signed (`npm run token -- --admin`), so a backend holding JWT_SECRET cannot administer the hub. Required with NODE_ENV=production (the hub refuses to start without it); generated outside production when unset and no REDIS_URL; unset outside production with Redis turns the ADMIN REST routes off (403).',
    format: 'secret',
    default: null as string | null,
    env: 'ADMIN_JWT_SECRET',
    sensitive: true,
  },
  JWT_PREVIOUS_SECRETS: {
    doc: 'Comma-separated former JWT secrets still accepted for verification during rotation (never used to sign); each at least 32 characters, like JWT_SECRET.',
    format: 'jwt-secret-list',
    default: null as string[] | null,
    env: 'JWT_PREVIOUS_SECRETS',
    sensitive: true,
  },
  JWT_ALGORITHMS: {
    doc: 'Comma-separated JWT algorithms accepted (HS256, HS384, HS512). The first one signs.',
    format: 'jwt-algorithms',
    default: ['HS256'] as JwtAlgorithm[],
    env: 'JWT_ALGORITHMS',
  },
  JWT_ISSUER: {
    doc: 'Required `iss` claim when set; minted tokens carry it.',
    format: 'optional-string',
    default: null as string | null,
    env: 'JWT_ISSUER',
  },
  JWT_AUDIENCE: {
    doc: 'Required `aud` claim when set; minted tokens carry it.',
    format: 'optional-string',
    default: null as string | null,
    env: 'JWT_AUDIENCE',
  },
  JWT_CLOCK_TOLERANCE_S: {
    doc: 'Seconds of clock skew tolerated when checking `exp` and `nbf`.',
    format: 'whole-number',
    default: 5,
    env: 'JWT_CLOCK_TOLERANCE_S',
  },
  JWT_REQUIRE_EXP: {
    doc: 'Reject client tokens without an `exp` claim.',
    format: 'strict-boolean',
    default: true,
    env: 'JWT_REQUIRE_EXP',
  },
  MINT_MAX_EXPIRES_IN: {
    doc: 'Longest lifetime POST /auth/embed/token may mint, as <n>(s|m|h|d). The default keeps minted tokens within the lifetimes recommended for demos and dashboards; 30d and more behave as long-lived bearer credentials.',
    format: 'duration',
    default: '24h',
    env: 'MINT_MAX_EXPIRES_IN',
  },
};
