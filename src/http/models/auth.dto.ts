import type { AgentId } from './agent.dto';

/** The caller, as the bearer token says. */
export interface MeDto {
  /**
   * Routing identity: `sub`, or `admin` for every ADMIN.
   * @example "<user_id>"
   */
  clientId: string;
  /** @example "<user_id>" */
  sub: string;
  /** @example "user@example.com" */
  email?: string;
  /** @example ["ADMIN"] */
  roles: string[];
  /**
   * When the token expires; null for a token without `exp`.
   * @example "2025-01-15T10:30:00.000Z"
   */
  tokenExpiresAt: Date | null;
}

/**
 * A token lifetime: 1–99999 followed by s, m, h or d; at most MINT_MAX_EXPIRES_IN, default `15m`.
 * @pattern ^[1-9]\d{0,4}[smhd]$
 * @example "15m"
 */
export type Duration = string;

/** Body of `mintEmbedToken`. Roles are never accepted: minted tokens are never ADMIN. */
export interface MintEmbedTokenDto {
  expiresIn?: Duration;
  /**
   * The user the token speaks for (JWT `sub`); `admin` in any case, with or without surrounding
   * spaces, is refused. Absent: an anonymous `anon_<uuid>`.
   * @minLength 1
   * @maxLength 128
   * @example "<user_id>"
   */
  sub?: string;
  /**
   * Kept in the socket data, for logs.
   * @pattern ^[^\s@]+@[^\s@]+\.[^\s@]+$
   * @example "user@example.com"
   */
  email?: string;
  /**
   * Bots the token may chat with, each one the minting key acts for (else 403
   * `AGENT_NOT_ALLOWED`). Absent: the key's own `agentIds` (patterns included), or any bot for a
   * key with `["*"]`.
   * @example ["support-bot"]
   */
  agentIds?: AgentId[];
}

/** A minted client token. */
export interface EmbedTokenDto {
  /** @example "<jwt>" */
  token: string;
  /** @example "2025-01-15T09:45:00.000Z" */
  expiresAt: Date;
}
