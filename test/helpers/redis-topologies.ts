import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { command, freePort, startListening, type RedisProcess } from './redis-process';
import { waitFor } from './wait';

export { startListening, type RedisProcess };

const run = promisify(execFile);

/** Redis Sentinel: one master, one replica, three Sentinels watching `name`. */
export interface TestSentinel {
  name: string;
  sentinels: RedisProcess[];
  servers: RedisProcess[];
  /** REDIS_SENTINELS and REDIS_SENTINEL_NAME for a hub. */
  env: Record<string, string>;
  /** The server the Sentinels currently call master. */
  master(): Promise<RedisProcess>;
  close(): Promise<void>;
}

/** Redis Cluster: masters with one replica each (see {@link ClusterShape}). */
export interface TestRedisCluster {
  nodes: RedisProcess[];
  /** REDIS_CLUSTER_NODES for a hub. */
  env: Record<string, string>;
  /** CLUSTER KEYSLOT of `key`. */
  keySlot(key: string): Promise<number>;
  /** The node that currently serves `slot` as master. */
  masterOf(slot: number): Promise<RedisProcess>;
  /** Resolves when every live node reports cluster_state:ok and every slot has a live master. */
  healthy(timeoutMs?: number): Promise<void>;
  /** Kills `node` (SIGKILL) and starts it again on its port with its cluster config; resolves with the new process once it answers. */
  restart(node: RedisProcess): Promise<RedisProcess>;
  /** Moves `slot` (holding no keys) from its master to the master `to`, as resharding does. */
  moveSlot(slot: number, to: RedisProcess): Promise<void>;
  close(): Promise<void>;
}

/** A free port whose cluster bus port (+10000) is free too. */
async function freeClusterPort(): Promise<number> {
  for (;;) {
    const port = await freePort();
    if (port + 10000 > 65535) continue;
    if (await isFree(port + 10000)) return port;
  }
}

function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

// No 5 s wait before a replica's first sync: a replica that never synced may not be promoted.
const BASE = ['--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--repl-diskless-sync-delay', '0'];

/** Runs `build` in a fresh directory; if it fails, stops the servers it started and removes the directory. */
async function cleanedUpOnFailure<T>(prefix: string, build: (dir: string, started: RedisProcess[]) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const started: RedisProcess[] = [];
  try {
    return await build(dir, started);
  } catch (err) {
    for (const p of started) await p.kill();
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}

export function startRedisSentinel(name = 'relaymaster'): Promise<TestSentinel> {
  return cleanedUpOnFailure('relay-sentinel-', (dir, started) => sentinelIn(dir, started, name));
}

async function sentinelIn(dir: string, started: RedisProcess[], name: string): Promise<TestSentinel> {
  const master = await startListening(
    freePort,
    (port) => [...BASE, '--port', String(port), '--dir', dir, '--dbfilename', 'm.rdb'],
    'master',
    started,
  );
  const masterPort = master.port;
  const replica = await startListening(
    freePort,
    (port) => [...BASE, '--port', String(port), '--dir', dir, '--dbfilename', 'r.rdb', '--replicaof', '127.0.0.1', String(masterPort)],
    'replica',
    started,
  );
  const replicaPort = replica.port;
  const servers = [master, replica];
  await waitFor(
    () =>
      command<string>(replicaPort, 'INFO', 'replication').then(
        (info) => info.includes('master_link_status:up'),
        () => false,
      ),
    10_000,
    'replica in sync',
  );
  const sentinels: RedisProcess[] = [];
  for (let i = 0; i < 3; i++) {
    const file = join(dir, `sentinel-${i}.conf`);
    const config = (port: number) => {
      writeFileSync(
        file,
        [
          `port ${port}`,
          'bind 127.0.0.1',
          `dir ${dir}`,
          `sentinel monitor ${name} 127.0.0.1 ${masterPort} 2`,
          `sentinel down-after-milliseconds ${name} 1000`,
          `sentinel failover-timeout ${name} 3000`,
          `sentinel parallel-syncs ${name} 1`,
          '',
        ].join('\n'),
      );
      return [file, '--sentinel'];
    };
    sentinels.push(await startListening(freePort, config, `sentinel ${i}`, started));
  }
  // Every Sentinel knows the master and has discovered the replica and the other Sentinels.
  for (const s of sentinels) {
    let seen = 'no answer';
    await waitFor(
      async () => {
        const info = await command<string[]>(s.port, 'SENTINEL', 'MASTER', name).catch(() => undefined);
        if (!info) return false;
        const field = (k: string) => info[info.indexOf(k) + 1];
        seen = `${field('num-slaves')} replicas, ${field('num-other-sentinels')} other sentinels, alive ${s.alive()}`;
        return Number(field('num-slaves')) >= 1 && Number(field('num-other-sentinels')) >= 2;
      },
      15_000,
      `sentinel ${s.port} ready`,
    ).catch((err: Error) => {
      throw new Error(`${err.message} (last seen: ${seen})`);
    });
  }
  return {
    name,
    sentinels,
    servers,
    env: { REDIS_SENTINELS: sentinels.map((s) => `127.0.0.1:${s.port}`).join(','), REDIS_SENTINEL_NAME: name },
    async master() {
      const live = sentinels.find((s) => s.alive()) as RedisProcess;
      const [, port] = await command<[string, string]>(live.port, 'SENTINEL', 'GET-MASTER-ADDR-BY-NAME', name);
      return servers.find((s) => s.port === Number(port)) as RedisProcess;
    },
    async close() {
      for (const p of [...sentinels, ...servers]) await p.kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** How a test's Redis Cluster is set up. */
export interface ClusterShape {
  /** Masters, each with one replica (default 3). */
  masters?: number;
  /** cluster-node-timeout (default 1000 ms): how long a master may be silent before its replica takes over. */
  nodeTimeoutMs?: number;
  /**
   * cluster-require-full-coverage (default false: a master without its replica still serves its
   * own slots). True is Redis's default: the whole cluster answers CLUSTERDOWN while any slot has
   * no master, as during a failover.
   */
  requireFullCoverage?: boolean;
  /** appendonly yes (fsync every second), so that a node restarted by {@link TestRedisCluster.restart} keeps its data. */
  appendOnly?: boolean;
}

export function startRedisCluster(shape: ClusterShape = {}): Promise<TestRedisCluster> {
  return cleanedUpOnFailure('relay-cluster-', (dir, started) => clusterIn(dir, started, shape));
}

async function clusterIn(
  dir: string,
  started: RedisProcess[],
  { masters = 3, nodeTimeoutMs = 1000, requireFullCoverage = false, appendOnly = false }: ClusterShape,
): Promise<TestRedisCluster> {
  const nodes: RedisProcess[] = [];
  const args = (port: number) => [
    ...BASE,
    '--port',
    String(port),
    '--dir',
    dir,
    '--dbfilename',
    `${port}.rdb`,
    '--cluster-enabled',
    'yes',
    '--cluster-config-file',
    `nodes-${port}.conf`,
    '--cluster-node-timeout',
    String(nodeTimeoutMs),
    '--cluster-require-full-coverage',
    requireFullCoverage ? 'yes' : 'no',
    ...(appendOnly ? ['--appendonly', 'yes', '--appendfilename', `${port}.aof`, '--appenddirname', `aof-${port}`] : []),
  ];
  for (let i = 0; i < masters * 2; i++) nodes.push(await startListening(freeClusterPort, args, `cluster node ${i}`, started));
  await run('redis-cli', ['--cluster', 'create', ...nodes.map((n) => `127.0.0.1:${n.port}`), '--cluster-replicas', '1', '--cluster-yes']);

  const masterOf = async (slot: number) => {
    const live = nodes.filter((n) => n.alive());
    for (const n of live) {
      const slots = await command<[number, number, [string, number]][]>(n.port, 'CLUSTER', 'SLOTS').catch(() => null);
      const range = slots?.find(([from, to]) => slot >= from && slot <= to);
      const owner = range ? nodes.find((x) => x.port === Number(range[2][1])) : undefined;
      if (owner?.alive()) return owner;
    }
    throw new Error(`no live master for slot ${slot}`);
  };
  const healthy = async (timeoutMs = 15_000) => {
    await waitFor(
      async () => {
        for (const n of nodes.filter((x) => x.alive())) {
          if (!(await command<string>(n.port, 'CLUSTER', 'INFO').catch(() => '')).includes('cluster_state:ok')) return false;
        }
        for (const slot of [0, 8191, 16383]) if (!(await masterOf(slot).catch(() => undefined))) return false;
        return true;
      },
      timeoutMs,
      'cluster healthy',
    );
  };
  await healthy();
  // Every replica has synced once: only then may it take over its master's slots.
  for (const n of nodes) {
    await waitFor(
      async () => {
        const info = await command<string>(n.port, 'INFO', 'replication').catch(() => '');
        return info.includes('role:master') || info.includes('master_link_status:up');
      },
      15_000,
      `node ${n.port} in sync`,
    );
  }
  return {
    nodes,
    env: {
      REDIS_CLUSTER_NODES: nodes
        .slice(0, 3)
        .map((n) => `127.0.0.1:${n.port}`)
        .join(','),
    },
    masterOf,
    healthy,
    keySlot: (key) => command<number>(nodes.find((n) => n.alive())!.port, 'CLUSTER', 'KEYSLOT', key),
    async restart(node) {
      await node.kill();
      const again = await startListening(() => Promise.resolve(node.port), args, `cluster node ${node.port} restarted`, started);
      nodes[nodes.indexOf(node)] = again;
      return again;
    },
    async moveSlot(slot, to) {
      const from = await masterOf(slot);
      const id = (n: RedisProcess) => command<string>(n.port, 'CLUSTER', 'MYID');
      const [fromId, toId] = [await id(from), await id(to)];
      // The order redis-cli --cluster reshard follows; with no keys there is nothing to MIGRATE.
      await command(to.port, 'CLUSTER', 'SETSLOT', slot, 'IMPORTING', fromId);
      await command(from.port, 'CLUSTER', 'SETSLOT', slot, 'MIGRATING', toId);
      await command(to.port, 'CLUSTER', 'SETSLOT', slot, 'NODE', toId);
      await command(from.port, 'CLUSTER', 'SETSLOT', slot, 'NODE', toId);
      await waitFor(async () => (await masterOf(slot).catch(() => undefined)) === to, 10_000, `slot ${slot} on ${to.port}`);
    },
    async close() {
      for (const n of nodes) await n.kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
