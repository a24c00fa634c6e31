import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort, redisBinary } from '../../deploy/cluster.cjs';
import { ManagedProcess, waitForLine } from '../../deploy/managed-process.cjs';
import { waitFor } from '../helpers/wait';

const run = promisify(execFile);
const SENTINEL_NAME = 'relay';
const READY = /Ready to accept connections/;

/**
 * The soak's Redis: one server with appendonly (`single`), or a Sentinel deployment of a master, a
 * replica and three Sentinels (`sentinel`, appendonly too), listening on loopback and on `host` (the
 * soak namespace's root address, so a hub inside it reaches them). Unlike deploy/redis-topology.cjs,
 * a server is restarted in the role the Sentinels give it now, so failovers can repeat.
 */
export interface SoakRedis {
  kind: 'single' | 'sentinel';
  /** REDIS_URL, or REDIS_SENTINELS and REDIS_SENTINEL_NAME, for the hubs. */
  env: Record<string, string>;
  /** SIGTERM and start again (the AOF is replayed): the server, or with Sentinel the current master. */
  restart(): Promise<string>;
  /** SIGKILL of the master; resolves once a Sentinel names another and the old one is back as its replica. */
  failover(): Promise<string>;
  stop(): Promise<void>;
  /** Every process, for the exit handler. */
  processes: ManagedProcess[];
}

export interface RedisOptions {
  kind: 'single' | 'sentinel';
  dir: string;
  /** Addresses to listen on besides 127.0.0.1; the first is the one the hubs and Sentinels use. */
  host: string;
  onLog?: (name: string, line: string) => void;
}

// Protected mode refuses the namespace's address; these servers listen only on loopback and the
// soak's own /30, which nothing outside this machine can reach.
const BASE = ['--save', '', '--appendonly', 'yes', '--daemonize', 'no', '--repl-diskless-sync-delay', '0', '--protected-mode', 'no'];

export async function startRedis(options: RedisOptions): Promise<SoakRedis> {
  const processes: ManagedProcess[] = [];
  const killAll = () => processes.forEach((p) => p.killGroup('SIGKILL'));
  process.on('exit', killAll);
  try {
    const redis = await startIn(options, processes);
    const stop = redis.stop;
    redis.stop = async () => {
      await stop();
      process.off('exit', killAll);
    };
    return redis;
  } catch (err) {
    killAll();
    process.off('exit', killAll);
    throw err;
  }
}

async function startIn(options: RedisOptions, processes: ManagedProcess[]): Promise<SoakRedis> {
  const { dir, host, onLog } = options;
  const bind = ['--bind', ...new Set(['127.0.0.1', host])];
  const redisBin = redisBinary();
  const server = async (name: string, port: number, extra: string[] = []) => {
    const serverDir = join(dir, name);
    mkdirSync(serverDir, { recursive: true });
    const proc = new ManagedProcess(name, redisBin, [...BASE, ...bind, '--port', String(port), '--dir', serverDir, ...extra], { onLog });
    processes.push(proc);
    proc.start();
    await waitForLine(proc, READY, 'accepting connections', 20_000);
    return { proc, port, base: [...BASE, ...bind, '--port', String(port), '--dir', serverDir] };
  };
  const restartAs = async (s: { proc: ManagedProcess; base: string[] }, replicaOf?: number) => {
    s.proc.args = replicaOf === undefined ? s.base : [...s.base, '--replicaof', host, String(replicaOf)];
    s.proc.tail = [];
    s.proc.start();
    await waitForLine(s.proc, READY, 'accepting connections', 20_000);
  };

  if (options.kind === 'single') {
    const s = await server('redis', await freePort('127.0.0.1'));
    return {
      kind: 'single',
      env: { REDIS_URL: `redis://${host}:${s.port}` },
      processes,
      async restart() {
        await s.proc.stop('SIGTERM', 10_000);
        await restartAs(s);
        return `redis :${s.port} restarted`;
      },
      failover: () => Promise.reject(new Error('no Sentinel in a single-server run')),
      async stop() {
        await s.proc.stop('SIGTERM', 10_000);
      },
    };
  }

  const m = await server('redis-a', await freePort('127.0.0.1'));
  const r = await server('redis-b', await freePort('127.0.0.1'), ['--replicaof', host, String(m.port)]);
  await waitFor(
    () =>
      cli(r.port, 'INFO', 'replication').then(
        (info) => info.includes('master_link_status:up'),
        () => false,
      ),
    15_000,
    'replica in sync',
    200,
  );
  const sentinels: number[] = [];
  for (let i = 1; i <= 3; i++) {
    const port = await freePort('127.0.0.1');
    const sdir = join(dir, `sentinel-${i}`);
    mkdirSync(sdir, { recursive: true });
    const conf = join(sdir, 'sentinel.conf');
    writeFileSync(
      conf,
      [
        `port ${port}`,
        `bind ${[...new Set(['127.0.0.1', host])].join(' ')}`,
        `dir ${sdir}`,
        'protected-mode no',
        `sentinel monitor ${SENTINEL_NAME} ${host} ${m.port} 2`,
        `sentinel down-after-milliseconds ${SENTINEL_NAME} 2000`,
        `sentinel failover-timeout ${SENTINEL_NAME} 6000`,
        '',
      ].join('\n'),
    );
    const proc = new ManagedProcess(`sentinel-${i}`, redisBin, [conf, '--sentinel'], { onLog });
    processes.push(proc);
    proc.start();
    await waitForLine(proc, /Sentinel ID is|monitor master/, 'monitoring', 20_000);
    sentinels.push(port);
  }
  for (const port of sentinels) {
    await waitFor(
      async () => {
        const info = (await cli(port, 'SENTINEL', 'MASTER', SENTINEL_NAME).catch(() => '')).split('\n');
        const field = (k: string) => Number(info[info.indexOf(k) + 1]);
        return field('num-slaves') >= 1 && field('num-other-sentinels') >= 2;
      },
      20_000,
      `sentinel :${port} to see the replica and the other sentinels`,
      200,
    );
  }
  const servers = [m, r];
  const masterPort = async () => Number((await cli(sentinels[0], 'SENTINEL', 'GET-MASTER-ADDR-BY-NAME', SENTINEL_NAME)).split('\n')[1]);
  const serverOn = (port: number) => servers.find((s) => s.port === port)!;
  return {
    kind: 'sentinel',
    env: { REDIS_SENTINELS: sentinels.map((p) => `${host}:${p}`).join(','), REDIS_SENTINEL_NAME: SENTINEL_NAME },
    processes,
    async restart() {
      const master = serverOn(await masterPort());
      await master.proc.stop('SIGTERM', 10_000);
      // Back as master: the Sentinels wait down-after (2 s) before failing over, a restart is quicker.
      await restartAs(master);
      return `master ${master.proc.name} restarted`;
    },
    async failover() {
      const old = serverOn(await masterPort());
      await old.proc.kill('SIGKILL');
      await waitFor(async () => (await masterPort().catch(() => old.port)) !== old.port, 30_000, 'a Sentinel to promote the replica', 200);
      const now = await masterPort();
      await restartAs(old, now);
      return `${old.proc.name} killed, ${serverOn(now).proc.name} promoted`;
    },
    async stop() {
      for (const p of [...processes].reverse()) await p.stop('SIGTERM', 10_000);
    },
  };
}

async function cli(port: number, ...args: string[]): Promise<string> {
  const { stdout } = await run('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args], { timeout: 5000 });
  return stdout.trim();
}
