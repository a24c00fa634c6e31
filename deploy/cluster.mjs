// `npm run cluster`: the docker-compose topology (Redis + 3 hubs + nginx) as local processes.
// The work is done by cluster.cjs (CommonJS so jest can require it); this file is the CLI and
// re-exports the API for ESM callers.
//
// Environment: CLUSTER_PORT (nginx, default 8080), CLUSTER_HOST (default 127.0.0.1),
// CLUSTER_REPLICAS (default 3), CLUSTER_REDIS (single: one redis-server, the default; sentinel: 1
// master + 1 replica + 3 Sentinels; cluster: Redis Cluster of 3 masters + 3 replicas), NGINX_BIN / REDIS_SERVER_BIN (binaries, found on PATH or in
// /usr/sbin otherwise); every other variable (JWT_SECRET, AGENT_API_KEYS, LOG_LEVEL, NODE_ENV, …)
// is passed to the hubs. Missing secrets are generated and printed.
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import cluster from './cluster.cjs';

export const { startCluster, writeNginxConfig, nginxArgs, testNginxConfig, nginxBinary, redisBinary, freePort, NGINX_CONF } = cluster;

const COLORS = [36, 33, 35, 32, 34, 31];

function prefixer() {
  const colors = new Map();
  const useColor = process.stdout.isTTY;
  return (name, line) => {
    if (!colors.has(name)) colors.set(name, COLORS[colors.size % COLORS.length]);
    const tag = `[${name}]`.padEnd(8);
    process.stdout.write(`${useColor ? `\x1b[${colors.get(name)}m${tag}\x1b[0m` : tag} ${line}\n`);
  };
}

function quote(value) {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}

async function main() {
  const log = prefixer();
  const replicas = Number(process.env.CLUSTER_REPLICAS ?? 3);
  if (!Number.isInteger(replicas) || replicas < 1) throw new Error('CLUSTER_REPLICAS must be a positive integer');
  const port = Number(process.env.CLUSTER_PORT ?? 8080);
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error('CLUSTER_PORT must be a port number');

  const handle = await startCluster({
    replicas,
    port,
    host: process.env.CLUSTER_HOST ?? '127.0.0.1',
    env: process.env,
    redis: process.env.CLUSTER_REDIS || 'single',
    onLog: log,
  });

  let firstSignalAt = 0;
  const onSignal = (signal) => {
    // A terminal Ctrl-C can arrive twice at once (directly and forwarded by npm); only a later one forces.
    if (firstSignalAt && Date.now() - firstSignalAt > 1000) {
      console.error(`\n${signal} again: killing everything without draining`);
      handle.forceStop();
      process.exit(130);
    }
    if (firstSignalAt) return;
    firstSignalAt = Date.now();
    console.error(`\n${signal}: draining the hubs (up to SHUTDOWN_GRACE_MS), then stopping nginx and Redis… (again to force)`);
    handle.stop().then(
      () => process.exit(0),
      (err) => {
        console.error(err);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  const jwt = quote(handle.secrets.JWT_SECRET);
  const lines = [
    '',
    `relay-hub cluster ready at ${handle.url}`,
    `  nginx ${handle.url} -> ${handle.replicas.map((r) => `${r.name} ${r.url} (pid ${r.pid})`).join(', ')}`,
    `  redis ${handle.redis.url} (appendonly, data in ${handle.dir}/redis, removed on stop)`,
    `  nginx access log: ${handle.nginx.accessLog}`,
    '',
    `  JWT_SECRET=${handle.secrets.JWT_SECRET}`,
    `  ADMIN_JWT_SECRET=${handle.secrets.ADMIN_JWT_SECRET}`,
    `  AGENT_API_KEYS=${handle.secrets.AGENT_API_KEYS}`,
    '',
    '  Mint a client token (admin token: add --admin and ADMIN_JWT_SECRET):',
    `    JWT_SECRET=${jwt} npm run token -- --sub alice --expires-in 1h`,
    `  Agents connect to ${handle.url} (namespace /ws/agent) with apiKey = one of AGENT_API_KEYS.`,
    `  API docs: ${handle.url}/api`,
    '',
    '  Ctrl-C stops everything (hubs drain first).',
    '',
  ];
  console.log(lines.join('\n'));

  for (const replica of handle.replicas) {
    replica.exited.then(({ code, signal }) => {
      if (!firstSignalAt) console.error(`${replica.name} exited unexpectedly (code ${code}, signal ${signal}); the others keep serving`);
    });
  }
}

const invokedDirectly = process.argv[1] !== undefined && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url);
if (invokedDirectly) {
  main().catch((err) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  });
}
