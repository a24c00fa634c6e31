import './config.formats';
import { authSchema } from './schema/auth.schema';
import { agentGraceSchema, historySchema } from './schema/history.schema';
import { docsSchema, httpSchema } from './schema/http.schema';
import { limitsSchema } from './schema/limits.schema';
import { loggingSchema } from './schema/logging.schema';
import { presenceSchema, redisSchema } from './schema/redis.schema';
import { serverSchema, shutdownSchema } from './schema/server.schema';
import { quotaSchema } from './schema/quota.schema';
import { streamsSchema } from './schema/streams.schema';
import { handoffSchema } from './schema/handoff.schema';

export { parseHostPort } from './config.formats';

/**
 * Every setting of the hub, assembled from one file per concern (src/config/schema/). The
 * environment variable of each key is the key itself. The table of docs/configuration.md is
 * generated from this object in this order (`npm run docs`), and a test checks that it is current
 * and lists every key. `HubConfig` (config.ts) is derived from it: a key's type is the type of
 * its `default`.
 */
export const configSchema = {
  ...serverSchema,
  ...redisSchema,
  ...authSchema,
  ...httpSchema,
  ...loggingSchema,
  ...docsSchema,
  ...limitsSchema,
  ...presenceSchema,
  ...historySchema,
  ...agentGraceSchema,
  ...streamsSchema,
  ...quotaSchema,
  ...handoffSchema,
  ...shutdownSchema,
};

export type ConfigSchema = typeof configSchema;
