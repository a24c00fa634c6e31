// @ts-check
'use strict';
// The docker-compose topology as local processes: one redis-server (appendonly, own temp dir), N hub
// replicas (`dist/main.js`) and Debian's nginx running deploy/nginx.conf in front of them.
// `npm run cluster` runs it as a CLI (deploy/cluster.mjs); cluster tests call startCluster() from
// here. CommonJS on purpose: jest (ts-jest, CommonJS) can require it without
// --experimental-vm-modules. Typed by its JSDoc: TypeScript tests import it as it is (allowJs), and
// `npm run typecheck` checks this file against those types. Its parts: host.cjs (free ports, the
// nginx and redis-server binaries), nginx.cjs (nginx's prefix, command line and `nginx -t`),
// managed-process.cjs (the child processes), redis-topology.cjs (sentinel and cluster); this file
// starts and stops the whole and is the one entry point, so it exports their helpers too.

const { randomBytes } = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { freePort, nginxBinary, redisBinary } = require('./host.cjs');
const { ManagedProcess, waitUntil, waitForLine, httpOk } = require('./managed-process.cjs');
const { NGINX_CONF, writeNginxConfig, nginxArgs, openAccessLog, testNginxConfig } = require('./nginx.cjs');
const { startRedisTopology, TOPOLOGIES } = require('./redis-topology.cjs');

const ROOT = path.resolve(__dirname, '..');

/**
 * @typedef {object} ClusterOptions
 * @property {number} [replicas] Hub replicas behind nginx (default 3).
 * @property {number} [port] nginx listen port; 0 or absent picks a free one (the CLI uses CLUSTER_PORT, default 8080).
 * @property {string} [host] nginx listen address (default 127.0.0.1). Hubs and Redis always bind 127.0.0.1.
 * @property {Record<string, string | undefined>} [env] Hub environment on top of the defaults
 *   (NODE_ENV=production, TRUST_PROXY=loopback, CORS_ORIGINS=the cluster's origin,
 *   SHUTDOWN_GRACE_MS=20000). JWT_SECRET / AGENT_API_KEYS given here are used, otherwise generated.
 *   PORT, HOST and the Redis topology keys are always set by the runner.
 * @property {'single' | 'sentinel' | 'cluster'} [redis] Redis topology (docs/deployment.md): `single`
 *   (default, one redis-server, REDIS_URL), `sentinel` (1 master + 1 replica + 3 Sentinels,
 *   REDIS_SENTINELS) or `cluster` (3 masters + 3 replicas, REDIS_CLUSTER_NODES). With sentinel or
 *   cluster, `redis` of the handle is not started.
 * @property {string} [hubEntry] Hub entry point (default dist/main.js).
 * @property {number} [readyTimeoutMs] How long each process may take to become ready (default 30000 ms).
 * @property {(name: string, line: string) => void} [onLog] Every output line of every process (nginx
 *   access log excepted: see nginx.accessLog).
 */

/** @typedef {{ code: number | null, signal: NodeJS.Signals | null }} ExitStatus */

/**
 * @typedef {object} ReplicaHandle
 * @property {number} index
 * @property {string} name hub-1, hub-2, …
 * @property {number} port
 * @property {string} url Direct URL of this replica, bypassing nginx.
 * @property {number | undefined} pid Current process id (changes on restart).
 * @property {boolean} running
 * @property {Promise<ExitStatus>} exited Resolves when the current process exits.
 * @property {() => string[]} logs The last 200 output lines.
 * @property {(signal?: NodeJS.Signals) => Promise<ExitStatus>} kill Sends a signal (default SIGTERM)
 *   and resolves when the process has exited.
 * @property {() => Promise<ExitStatus>} stop SIGTERM, SIGKILL if still running SHUTDOWN_GRACE_MS + 5 s later.
 * @property {() => Promise<void>} start Starts the replica again on the same port; resolves when
 *   /health/ready answers 200.
 * @property {() => Promise<void>} restart stop() then start().
 */

/**
 * @typedef {object} ClusterHandle
 * @property {string} url nginx origin, e.g. http://127.0.0.1:8080 — what SDKs and REST clients use.
 * @property {number} port
 * @property {string} dir Temp dir with Redis data, nginx prefix and logs; removed by stop().
 * @property {{ JWT_SECRET: string, ADMIN_JWT_SECRET: string, AGENT_API_KEYS: string }} secrets
 * @property {Record<string, string | undefined>} env Environment shared by the hubs (without PORT).
 * @property {ReplicaHandle[]} replicas
 * @property {{
 *   port: number,
 *   url: string,
 *   readonly pid: number | undefined,
 *   logs(): string[],
 *   kill(signal?: NodeJS.Signals): Promise<ExitStatus>,
 *   stop(): Promise<ExitStatus>,
 *   start(): Promise<void>,
 * }} redis The single redis-server; `start` starts it again on the same port and data dir (the AOF is replayed).
 * @property {{
 *   port: number,
 *   accessLog: string,
 *   readonly pid: number | undefined,
 *   logs(): string[],
 *   stop(): Promise<ExitStatus>,
 * }} nginx
 * @property {() => Promise<void>} stop SIGTERM to the hubs and wait for them, then nginx, then Redis;
 *   removes the temp dir. Idempotent.
 * @property {() => void} forceStop SIGKILL to every process group at once.
 */

/** @typedef {import('./nginx.cjs').NginxLayout} NginxLayout What writeNginxConfig lays out (exported from here with it). */

/**
 * The node flags the hub runs with: deploy/Dockerfile's CMD and `npm start` spell the same ones
 * (test/unit/deploy/dockerfile.test.ts keeps them in step). Why each: the Dockerfile's comment on CMD.
 */
const HUB_NODE_FLAGS = ['--max-semi-space-size=16', '--no-allocation-site-pretenuring'];

/** @param {number} bytes */
function secret(bytes) {
  return randomBytes(bytes).toString('base64url');
}

/**
 * Starts redis-server, `replicas` hubs and nginx; resolves when nginx answers /health/ready through
 * the hubs.
 * @param {ClusterOptions} [options]
 * @returns {Promise<ClusterHandle>}
 */
async function startCluster(options = {}) {
  const {
    replicas: replicaCount = 3,
    host = '127.0.0.1',
    hubEntry = path.join(ROOT, 'dist', 'main.js'),
    readyTimeoutMs = 30_000,
    onLog,
    redis: topology = 'single',
  } = options;
  if (!TOPOLOGIES.includes(topology)) throw new Error(`redis must be one of ${TOPOLOGIES.join(', ')}, not ${topology}`);
  const env = options.env ?? {};
  if (!fs.existsSync(hubEntry)) throw new Error(`${hubEntry} does not exist; run \`npm run build\` first`);
  const nginxBin = nginxBinary();
  const redisBin = redisBinary();

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'relay-hub-cluster-'));
  /** @type {InstanceType<typeof ManagedProcess>[]} */
  const started = [];
  const exitHandler = () => started.forEach((p) => p.killGroup('SIGKILL'));
  process.on('exit', exitHandler);

  try {
    const redisPort = await freePort('127.0.0.1');

    // --- redis ---------------------------------------------------------------------------------
    const redisDir = path.join(dir, 'redis');
    fs.mkdirSync(redisDir);
    const redisUrl = `redis://127.0.0.1:${redisPort}`;
    const redisProc = new ManagedProcess(
      'redis',
      redisBin,
      ['--port', String(redisPort), '--bind', '127.0.0.1', '--dir', redisDir, '--save', '', '--appendonly', 'yes', '--daemonize', 'no'],
      { onLog },
    );
    started.push(redisProc);
    const startRedis = async () => {
      redisProc.tail = [];
      redisProc.start();
      await waitForLine(redisProc, /Ready to accept connections/, 'accepting connections', readyTimeoutMs);
    };
    // sentinel / cluster: their own processes (redis-topology.cjs); the single server is not started.
    const topologyEnv =
      topology === 'single'
        ? { REDIS_URL: redisUrl }
        : (await startRedisTopology(topology, { redisBin, dir, freePort, onLog, readyTimeoutMs, started })).env;
    if (topology === 'single') await startRedis();
    // Picked once Redis listens: a Redis Cluster node also listens on its port + 10000 (the cluster
    // bus), which a port picked before it started could be.
    const port = options.port || (await freePort(host));
    const hubPorts = [];
    for (let i = 0; i < replicaCount; i++) hubPorts.push(await freePort('127.0.0.1'));
    const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;

    // --- hubs ----------------------------------------------------------------------------------
    const secrets = {
      JWT_SECRET: env.JWT_SECRET || secret(48),
      ADMIN_JWT_SECRET: env.ADMIN_JWT_SECRET || secret(48),
      AGENT_API_KEYS: env.AGENT_API_KEYS || `ak_${secret(32)}`,
    };
    const hubEnv = {
      ...process.env,
      // Same settings as docker-compose.yml, overridable through options.env.
      NODE_ENV: 'production',
      LOG_LEVEL: 'info',
      TRUST_PROXY: 'loopback',
      CORS_ORIGINS: `http://localhost:${port},http://127.0.0.1:${port}`,
      SHUTDOWN_GRACE_MS: '20000',
      ...env,
      ...secrets,
      HOST: '127.0.0.1',
      REDIS_URL: undefined,
      REDIS_SENTINELS: undefined,
      REDIS_CLUSTER_NODES: undefined,
      ...topologyEnv,
    };
    const graceMs = Number(hubEnv.SHUTDOWN_GRACE_MS) || 20_000;
    const replicas = hubPorts.map((hubPort, i) => {
      const name = `hub-${i + 1}`;
      const proc = new ManagedProcess(name, process.execPath, [...HUB_NODE_FLAGS, hubEntry], {
        onLog,
        cwd: ROOT,
        env: {
          OPENAPI_SPEC_FILE: path.join(dir, `${name}.openapi.json`),
          ...hubEnv,
          PORT: String(hubPort),
        },
      });
      started.push(proc);
      const replicaUrl = `http://127.0.0.1:${hubPort}`;
      const start = async () => {
        proc.tail = [];
        proc.start();
        await waitUntil(proc, 'ready', () => httpOk(`${replicaUrl}/health/ready`), readyTimeoutMs);
      };
      return {
        index: i,
        name,
        port: hubPort,
        url: replicaUrl,
        get pid() {
          return proc.pid;
        },
        get running() {
          return proc.running;
        },
        get exited() {
          return proc.exited;
        },
        logs: () => [...proc.tail],
        kill: (signal = 'SIGTERM') => proc.kill(signal),
        stop: () => proc.stop('SIGTERM', graceMs + 5000),
        async restart() {
          await proc.stop('SIGTERM', graceMs + 5000);
          await start();
        },
        start,
      };
    });
    await Promise.all(replicas.map((r) => r.start()));

    // --- nginx ---------------------------------------------------------------------------------
    const layout = writeNginxConfig(dir, {
      listen: `${host.includes(':') ? `[${host}]` : host}:${port}`,
      servers: hubPorts.map((p) => `127.0.0.1:${p}`),
    });
    const checked = await testNginxConfig(layout, nginxBin);
    if (!checked.ok) throw new Error(`nginx -t rejected ${NGINX_CONF}:\n${checked.output}`);
    const accessLog = openAccessLog(layout);
    const nginxProc = new ManagedProcess('nginx', nginxBin, nginxArgs(layout), { onLog, stdoutFd: accessLog });
    started.push(nginxProc);
    nginxProc.start();
    fs.closeSync(accessLog); // the child has its own copy
    await waitUntil(nginxProc, 'proxying to the hubs', () => httpOk(`${url}/health/ready`), readyTimeoutMs);

    let stopping;
    const stop = () =>
      (stopping ??= (async () => {
        // Hubs first (they drain over SHUTDOWN_GRACE_MS and still need Redis), then the edge, then Redis.
        await Promise.all(replicas.map((r) => r.stop()));
        await nginxProc.stop('SIGTERM', 5000);
        await redisProc.stop('SIGTERM', 10_000);
        await Promise.all(
          started.filter((p) => p.name.startsWith('redis-') || p.name.startsWith('sentinel-')).map((p) => p.stop('SIGTERM', 10_000)),
        );
        process.off('exit', exitHandler);
        fs.rmSync(dir, { recursive: true, force: true });
      })());

    return {
      url,
      port,
      dir,
      secrets,
      env: hubEnv,
      replicas,
      redis: {
        port: redisPort,
        url: redisUrl,
        get pid() {
          return redisProc.pid;
        },
        logs: () => [...redisProc.tail],
        kill: (signal = 'SIGTERM') => redisProc.kill(signal),
        stop: () => redisProc.stop('SIGTERM', 10_000),
        start: startRedis,
      },
      nginx: {
        port,
        accessLog: path.join(layout.prefix, 'access.log'),
        get pid() {
          return nginxProc.pid;
        },
        logs: () => [...nginxProc.tail],
        stop: () => nginxProc.stop('SIGTERM', 5000),
      },
      stop,
      /** SIGKILL to everything, no draining (for a second Ctrl-C). */
      forceStop() {
        started.forEach((p) => p.killGroup('SIGKILL'));
      },
    };
  } catch (err) {
    started.forEach((p) => p.killGroup('SIGKILL'));
    await Promise.all(started.map((p) => p.exited));
    process.off('exit', exitHandler);
    fs.rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}

module.exports = {
  startCluster,
  writeNginxConfig,
  nginxArgs,
  testNginxConfig,
  nginxBinary,
  redisBinary,
  freePort,
  NGINX_CONF,
  HUB_NODE_FLAGS,
};
