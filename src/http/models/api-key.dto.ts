/**
 * What an API key may do, each for the bots in the key's `agentIds` only: `embed:mint` for
 * `mintEmbedToken` (tokens limited to those bots), `messages:publish` for `publishAgentMessage`,
 * `agent:connect` to serve them as an agent runtime at `/ws/agent`, `history:read` /
 * `history:write` for the conversation operations.
 * @example "embed:mint"
 */
export type ApiKeyScope = 'embed:mint' | 'messages:publish' | 'agent:connect' | 'history:read' | 'history:write';

/** A REST API key; the secret itself is shown only once, by `createApiKey`. */
export interface ApiKeyDto {
  /** @example "<api_key_id>" */
  id: string;
  /** @example "<NAME>" */
  name: string;
  /** @example ["embed:mint"] */
  scopes: ApiKeyScope[];
  /**
   * First characters of the key, to tell keys apart.
   * @example "rk_Ab12Cd"
   */
  prefix: string;
  /**
   * Bots the key acts for on every scope it holds: exact agentIds, or prefixes ending in `*`;
   * `["*"]` for every bot (also shown for keys created before keys were bound to bots, which act
   * for every bot).
   * @example ["support-bot", "sales-*"]
   */
  agentIds: string[];
  /**
   * Whether the key may publish to `to: "admin"`, the bot's admins.
   * @example false
   */
  adminRecipient: boolean;
  /** @example "2025-01-15T09:30:00.000Z" */
  createdAt: Date;
  /** @example "2025-01-15T10:00:00.000Z" */
  lastUsedAt?: Date;
}

/** The key returned by `createApiKey`, with its secret. */
export interface CreatedApiKeyDto extends ApiKeyDto {
  /**
   * The secret, sent in the `api-key` header. Shown only now; the hub keeps a hash.
   * @example "<api_key>"
   */
  key: string;
}

/** Body of `createApiKey`. */
export interface CreateApiKeyDto {
  /**
   * A label for humans.
   * @minLength 1
   * @maxLength 100
   * @example "<NAME>"
   */
  name: string;
  /**
   * @minItems 1
   * @example ["embed:mint"]
   */
  scopes: ApiKeyScope[];
  /**
   * Bots the key acts for, on every scope it holds (serving, publishing, history, minting): exact
   * agentIds (`[A-Za-z0-9._:-]`, 1–128 chars) or a prefix of one ending in `*`. A key for every bot
   * says so explicitly with `["*"]`. Anything else is refused with 403 `AGENT_NOT_ALLOWED`.
   * @minItems 1
   * @maxItems 100
   * @example ["support-bot", "sales-*"]
   */
  agentIds: string[];
  /**
   * Let a `messages:publish` key publish to `to: "admin"` (the bot's admins). Default false.
   * @example false
   */
  adminRecipient?: boolean;
}
