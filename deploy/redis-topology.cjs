// CLUSTER_REDIS=sentinel|cluster for `npm run cluster`: local redis-server processes in the shape
// of a Sentinel deployment (1 master + 1 replica + 3 Sentinels) or a Redis Cluster (3 masters + 3
// replicas), and the hub settings that select it (docs/deployment.md, "Redis topologies"). `single` stays in cluster.cjs.
'use strict';

const { execFile } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { ManagedProcess, waitForLine } = require('./managed-process.cjs');

const TOPOLOGIES = ['single', 'sentinel', 'cluster'];
const BASE = ['--bind', '127.0.0.1', '--save', '', '--appendonly', 'yes', '--daemonize', 'no', '--repl-diskless-sync-delay', '0'];

function redisCli(args) {
  return new Promise((resolve, reject) =>
    execFile('redis-cli', args, (err, stdout, stderr) =>
      err ? reject(new Error(`redis-cli ${args.join(' ')}: ${stderr || err.message}`)) : resolve(stdout),
    ),
  );
}

/**
 * Starts the processes of `kind` ('sentinel' or 'cluster') under `dir`; resolves with them and the
 * hub environment (REDIS_SENTINELS + REDIS_SENTINEL_NAME, or REDIS_CLUSTER_NODES) once usable.
 */
async function startRedisTopology(kind, { redisBin, dir, freePort, onLog, readyTimeoutMs, started }) {
  const spawnServer = async (name, args, ready = /Ready to accept connections/) => {
    const proc = new ManagedProcess(name, redisBin, args, { onLog });
    started.push(proc);
    proc.start();
    await waitForLine(proc, ready, 'accepting connections', readyTimeoutMs);
    return proc;
  };
  const serverDir = (name) => {
    const d = path.join(dir, name);
    fs.mkdirSync(d);
    return d;
  };

  if (kind === 'sentinel') {
    const master = await freePort('127.0.0.1');
    const replica = await freePort('127.0.0.1');
    await spawnServer('redis-m', [...BASE, '--port', String(master), '--dir', serverDir('redis-m')]);
    await spawnServer('redis-r', [
      ...BASE,
      '--port',
      String(replica),
      '--dir',
      serverDir('redis-r'),
      '--replicaof',
      '127.0.0.1',
      String(master),
    ]);
    const sentinels = [];
    for (let i = 1; i <= 3; i++) {
      const port = await freePort('127.0.0.1');
      const d = serverDir(`sentinel-${i}`);
      const conf = path.join(d, 'sentinel.conf');
      fs.writeFileSync(
        conf,
        [
          `port ${port}`,
          'bind 127.0.0.1',
          `dir ${d}`,
          `sentinel monitor relay 127.0.0.1 ${master} 2`,
          'sentinel down-after-milliseconds relay 2000',
          'sentinel failover-timeout relay 10000',
          '',
        ].join('\n'),
      );
      await spawnServer(`sentinel-${i}`, [conf, '--sentinel'], /Sentinel ID is|monitor master/);
      sentinels.push(`127.0.0.1:${port}`);
    }
    return { env: { REDIS_SENTINELS: sentinels.join(','), REDIS_SENTINEL_NAME: 'relay' } };
  }

  if (kind === 'cluster') {
    const nodes = [];
    while (nodes.length < 6) {
      const port = await freePort('127.0.0.1');
      if (port + 10000 > 65535) continue; // the cluster bus listens on port + 10000
      const name = `redis-${nodes.length + 1}`;
      await spawnServer(name, [
        ...BASE,
        '--port',
        String(port),
        '--dir',
        serverDir(name),
        '--cluster-enabled',
        'yes',
        '--cluster-config-file',
        'nodes.conf',
        '--cluster-node-timeout',
        '2000',
      ]);
      nodes.push(`127.0.0.1:${port}`);
    }
    await redisCli(['--cluster', 'create', ...nodes, '--cluster-replicas', '1', '--cluster-yes']);
    const port = nodes[0].split(':')[1];
    const deadline = Date.now() + readyTimeoutMs;
    while (!(await redisCli(['-p', port, 'cluster', 'info'])).includes('cluster_state:ok')) {
      if (Date.now() > deadline) throw new Error('Redis Cluster did not reach cluster_state:ok');
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    return { env: { REDIS_CLUSTER_NODES: nodes.slice(0, 3).join(',') } };
  }
  throw new Error(`CLUSTER_REDIS must be one of ${TOPOLOGIES.join(', ')}, not ${kind}`);
}

module.exports = { startRedisTopology, TOPOLOGIES };
