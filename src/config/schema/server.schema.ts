/** Where the hub listens and in which environment. */
export const serverSchema = {
  NODE_ENV: {
    doc: 'Runtime environment. `production` requires every secret to be set and restricts CORS to CORS_ORIGINS.',
    format: ['production', 'development', 'test'],
    default: 'development' as 'production' | 'development' | 'test',
    env: 'NODE_ENV',
  },
  PORT: {
    doc: 'TCP port the HTTP and Socket.IO server listens on (0 picks a free port).',
    format: 'tcp-port',
    default: 3000,
    env: 'PORT',
  },
  HOST: {
    doc: 'Interface to listen on.',
    format: String,
    default: '0.0.0.0',
    env: 'HOST',
  },
};

/** How a replica stops. */
export const shutdownSchema = {
  SHUTDOWN_GRACE_MS: {
    doc: 'On SIGTERM, the time over which connections are closed in batches before the process exits.',
    format: 'whole-number',
    default: 20000,
    env: 'SHUTDOWN_GRACE_MS',
  },
};
