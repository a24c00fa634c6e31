import { durationSeconds } from './config/duration';
import { ConfigError, loadConfig } from './config/config';
import { quietLibraryDebug } from './logging/library-debug';
import { createLogger } from './logging/logger';

/** Exit code when PORT is taken, apart from 1 (bad configuration, crash) so supervisors can tell. */
const EXIT_ADDRESS_IN_USE = 3;

async function main(): Promise<void> {
  let loaded;
  try {
    loaded = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`relay-hub: ${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
  const { config, generated } = loaded;
  const logger = createLogger(config.LOG_LEVEL);
  // Before the hub loads Socket.IO, Engine.IO and ioredis, which take their `debug` module then.
  quietLibraryDebug();
  const { createHub } = await import('./hub/hub');
  const hub = await createHub(config, { logger });

  if (generated.JWT_SECRET || generated.AGENT_API_KEYS || generated.ADMIN_JWT_SECRET) {
    const adminToken = hub.jwt.adminTokensEnabled ? hub.jwt.signAdmin({ sub: 'dev-admin' }, durationSeconds('24h')).token : null;
    // `export` lines, so a second terminal (a bot, `npm run -s token`, curl) takes them by pasting (README.md).
    process.stdout.write(
      [
        '',
        'relay-hub: development secrets were generated for this run. Paste these lines into the shell of your bot,',
        '`npm run -s token` or curl; export them before `npm start` to keep them across restarts:',
        generated.JWT_SECRET ? `  export JWT_SECRET=${generated.JWT_SECRET}` : '',
        generated.ADMIN_JWT_SECRET ? `  export ADMIN_JWT_SECRET=${generated.ADMIN_JWT_SECRET}` : '',
        generated.AGENT_API_KEYS ? `  export AGENT_API_KEYS=${generated.AGENT_API_KEYS}` : '',
        adminToken ? `  export ADMIN=${adminToken}` : '',
        adminToken ? '$ADMIN is an admin token valid 24h: "Authorize" on /api, or curl -H "Authorization: Bearer $ADMIN".' : '',
        '',
      ]
        .filter((line, i, all) => line !== '' || i === 0 || i === all.length - 1)
        .join('\n') + '\n',
    );
  }
  if (!hub.jwt.adminTokensEnabled) {
    logger.warn('ADMIN_JWT_SECRET is not set: the ADMIN REST routes (users, API keys, agents) refuse every token');
  }
  if (hub.store.kind === 'memory') {
    logger.warn(
      'no Redis (REDIS_URL, REDIS_SENTINELS or REDIS_CLUSTER_NODES): single replica with in-memory state (users, API keys, deactivations are lost on restart)',
    );
  }

  let port: number;
  try {
    port = await hub.listen(config.PORT, config.HOST);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
    process.stderr.write(
      `relay-hub: cannot listen on ${config.HOST}:${config.PORT}: the address is already in use (EADDRINUSE). ` +
        'Stop the process that holds it or set PORT (or HOST) to a free one.\n',
    );
    process.exit(EXIT_ADDRESS_IN_USE);
  }
  const host = config.HOST === '0.0.0.0' || config.HOST === '::' ? 'localhost' : config.HOST;
  logger.info({ port }, `relay-hub listening on http://${host}:${port}`);

  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    const deadline = setTimeout(() => {
      logger.error('drain exceeded SHUTDOWN_GRACE_MS; exiting');
      process.exit(1);
    }, config.SHUTDOWN_GRACE_MS + 5000);
    deadline.unref();
    hub.drain(config.SHUTDOWN_GRACE_MS).then(
      () => {
        logger.info('drained; bye');
        process.exit(0);
      },
      (err) => {
        logger.error({ err }, 'drain failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

main().catch((err) => {
  process.stderr.write(`relay-hub: failed to start: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
