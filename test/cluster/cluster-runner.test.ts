// deploy/cluster.cjs (`npm run cluster`, reused by the cluster tests): starts real redis-server and
// nginx processes around stand-in hubs, so the runner's contract is checked without the hub itself.
import { existsSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import { startCluster, type ClusterHandle } from '../../deploy/cluster.cjs';

const STAND_IN = join(__dirname, 'fixtures', 'stand-in-hub.js');

type WhoAmI = { pid: number; forwardedFor?: string; env: Record<string, string | undefined> };

async function whoami(url: string): Promise<WhoAmI> {
  const res = await fetch(`${url}/whoami`, { headers: { 'X-Forwarded-For': '198.51.100.7' } });
  expect(res.status).toBe(200);
  return (await res.json()) as WhoAmI;
}

/** One RESP command over a fresh connection; resolves with the raw reply. */
function redis(port: number, ...args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.write(`*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`);
    socket.once('data', (d) => {
      socket.destroy();
      resolve(d.toString());
    });
    socket.once('error', reject);
  });
}

const alive = (pid: number | undefined) => {
  if (pid === undefined) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('startCluster', () => {
  let cluster: ClusterHandle;

  beforeAll(async () => {
    cluster = await startCluster({ hubEntry: STAND_IN, env: { EXTRA: 'passed-through' } });
  });

  afterAll(async () => {
    await cluster?.stop();
  });

  test('puts three replicas behind nginx, all on one Redis with the same secrets', async () => {
    expect(cluster.replicas.map((r) => r.name)).toEqual(['hub-1', 'hub-2', 'hub-3']);
    const seen = new Map<number, WhoAmI>();
    for (let i = 0; i < 9; i++) {
      const me = await whoami(cluster.url);
      seen.set(me.pid, me);
    }
    expect(seen.size).toBeGreaterThanOrEqual(2);
    for (const me of seen.values()) {
      expect(me.env).toMatchObject({
        REDIS_URL: cluster.redis.url,
        JWT_SECRET: cluster.secrets.JWT_SECRET,
        AGENT_API_KEYS: cluster.secrets.AGENT_API_KEYS,
        NODE_ENV: 'production',
        HOST: '127.0.0.1',
        EXTRA: 'passed-through',
      });
      expect(me.env.CORS_ORIGINS).toContain(cluster.url);
      expect(me.forwardedFor).toBe('127.0.0.1');
      expect(cluster.replicas.map((r) => String(r.port))).toContain(me.env.PORT);
    }
    expect(cluster.secrets.JWT_SECRET.length).toBeGreaterThanOrEqual(32);
  });

  test('runs Redis with appendonly in its own directory, so data survives a restart', async () => {
    expect(await redis(cluster.redis.port, 'CONFIG', 'GET', 'appendonly')).toContain('yes');
    expect(await redis(cluster.redis.port, 'CONFIG', 'GET', 'dir')).toContain(cluster.dir);
    expect(await redis(cluster.redis.port, 'SET', 'relay-hub:probe', 'kept')).toBe('+OK\r\n');
    const before = cluster.redis.pid;
    await cluster.redis.stop();
    expect(alive(before)).toBe(false);
    await cluster.redis.start();
    expect(cluster.redis.pid).not.toBe(before);
    expect(await redis(cluster.redis.port, 'GET', 'relay-hub:probe')).toBe('$4\r\nkept\r\n');
  });

  test('keeps serving through nginx when a replica dies, and restarts it on the same port', async () => {
    const victim = cluster.replicas[0];
    const oldPid = victim.pid;
    expect(await victim.kill('SIGKILL')).toEqual({ code: null, signal: 'SIGKILL' });
    expect(victim.running).toBe(false);
    for (let i = 0; i < 6; i++) expect((await whoami(cluster.url)).pid).not.toBe(oldPid);

    await victim.restart();
    expect(victim.running).toBe(true);
    expect(victim.pid).not.toBe(oldPid);
    expect((await fetch(`${victim.url}/health/ready`)).status).toBe(200);
  });

  test('stop() drains the hubs while Redis is still up, then removes everything', async () => {
    const pids = [...cluster.replicas.map((r) => r.pid), cluster.redis.pid, cluster.nginx.pid];
    await cluster.stop();
    for (const replica of cluster.replicas) {
      expect(await replica.exited).toEqual({ code: 0, signal: null });
      expect(replica.logs()).toContain('drain: redis +PONG');
    }
    expect(pids.filter(alive)).toEqual([]);
    expect(existsSync(cluster.dir)).toBe(false);
    await expect(fetch(`${cluster.url}/health/live`)).rejects.toThrow();
  });
});

describe('startCluster failures', () => {
  test('asks for a build when the hub entry is missing', async () => {
    await expect(startCluster({ hubEntry: join(__dirname, 'fixtures', 'missing-hub.js') })).rejects.toThrow(
      /does not exist; run `npm run build` first/,
    );
  });

  test('names the replica that did not come up and shows its output', async () => {
    const attempt = startCluster({ hubEntry: join(__dirname, 'fixtures', 'crashing-hub.js'), replicas: 1 });
    await expect(attempt).rejects.toThrow(/hub-1 exited before it was ready; last output:\n.*JWT_SECRET: must be a secret/);
  });

  test("PORT, HOST and REDIS_URL stay the runner's whatever options.env says", async () => {
    const cluster = await startCluster({
      hubEntry: STAND_IN,
      replicas: 1,
      env: { PORT: '1', HOST: '0.0.0.0', REDIS_URL: 'redis://elsewhere:6379' },
    });
    try {
      const me = await whoami(cluster.url);
      expect(me.env).toMatchObject({ PORT: String(cluster.replicas[0].port), HOST: '127.0.0.1', REDIS_URL: cluster.redis.url });
    } finally {
      await cluster.stop();
    }
  });
});
