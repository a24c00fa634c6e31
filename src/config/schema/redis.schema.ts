/** Which Redis the replicas share (docs/operations.md); none: one replica with in-memory state. */
export const redisSchema = {
  REDIS_URL: {
    doc: 'One Redis server shared by all replicas (redis:// or rediss://, ACL user:password in the URL). At most one of REDIS_URL, REDIS_SENTINELS, REDIS_CLUSTER_NODES; none: single replica with in-memory state (lost on restart).',
    format: 'redis-url',
    default: null as string | null,
    env: 'REDIS_URL',
    sensitive: true,
  },
  REDIS_SENTINELS: {
    doc: 'Comma-separated host:port list of Redis Sentinels (with REDIS_SENTINEL_NAME): failover through Sentinel instead of REDIS_URL.',
    format: 'redis-nodes',
    default: null as string[] | null,
    env: 'REDIS_SENTINELS',
  },
  REDIS_SENTINEL_NAME: {
    doc: 'Name of the master the Sentinels watch (the `sentinel monitor` name); required with REDIS_SENTINELS.',
    format: 'optional-string',
    default: null as string | null,
    env: 'REDIS_SENTINEL_NAME',
  },
  REDIS_SENTINEL_PASSWORD: {
    doc: 'Password of the Sentinels themselves (requirepass of sentinel.conf), when they have one.',
    format: 'optional-string',
    default: null as string | null,
    env: 'REDIS_SENTINEL_PASSWORD',
    sensitive: true,
  },
  REDIS_CLUSTER_NODES: {
    doc: 'Comma-separated host:port list of some Redis Cluster nodes (the rest are discovered): sharded Redis instead of REDIS_URL.',
    format: 'redis-nodes',
    default: null as string[] | null,
    env: 'REDIS_CLUSTER_NODES',
  },
  REDIS_USERNAME: {
    doc: 'ACL user for the Redis servers behind REDIS_SENTINELS or REDIS_CLUSTER_NODES (with REDIS_URL, put it in the URL).',
    format: 'optional-string',
    default: null as string | null,
    env: 'REDIS_USERNAME',
  },
  REDIS_PASSWORD: {
    doc: 'Password for the Redis servers behind REDIS_SENTINELS or REDIS_CLUSTER_NODES (with REDIS_URL, put it in the URL).',
    format: 'optional-string',
    default: null as string | null,
    env: 'REDIS_PASSWORD',
    sensitive: true,
  },
  REDIS_TLS: {
    doc: 'Connect with TLS to the Redis servers behind REDIS_SENTINELS or REDIS_CLUSTER_NODES (with REDIS_URL, use rediss://).',
    format: 'strict-boolean',
    default: false,
    env: 'REDIS_TLS',
  },
};

/** How long a replica's presence entries outlive it. */
export const presenceSchema = {
  PRESENCE_TTL_S: {
    doc: "Lifetime of a replica's presence entries in Redis; the replica refreshes them every third of it, so a dead replica's entries expire.",
    format: 'whole-number',
    default: 30,
    env: 'PRESENCE_TTL_S',
  },
};
