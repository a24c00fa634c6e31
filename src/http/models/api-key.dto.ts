/**
 * What an API key may do: `embed:mint` for `mintEmbedToken`, `messages:publish` for `publishAgentMessage`.
 * @example "embed:mint"
 */
export type ApiKeyScope = 'embed:mint' | 'messages:publish';

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
}
