// The processes of `npm run bench` (bench/run.mjs): the servers (the hub, the baseline relay or
// another build of the hub), generator processes and private redis-servers it starts, and what it
// reads of a server: its V8 heap line and GCs (bench/gc-signal.cjs), RSS and CPU time (/proc).
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { generatorClient } from './generator-client.mjs';
import { HUB_NODE_FLAGS } from './hub-env.mjs';
import { rssBytes, sleep } from './proc.mjs';

const { freePort } = createRequire(import.meta.url)('../deploy/cluster.cjs');

/**
 * Starts the processes of one run: `args` the command line (--hub, --versus, --versus-node-flags,
 * --adapter), `hubEnv` the hub's settings, `secret` the JWT secret the baseline verifies with.
 * `children` holds every process still running, for the run to kill at its end.
 */
export function runProcesses({ root, args, hubEnv, secret }) {
  const children = new Set();

  /** Spawns `node <script>` under the hard file-descriptor limit (10,000 sockets need it). */
  function spawnNode(script, env, { ipc = false, nodeFlags = [] } = {}) {
    const flags = ipc ? [] : [...nodeFlags, '--expose-gc', '--require', join(root, 'bench', 'gc-signal.cjs')];
    const child = spawn('sh', ['-c', 'ulimit -n "$(ulimit -Hn)"; exec "$0" "$@"', process.execPath, ...flags, script], {
      cwd: root,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe', ...(ipc ? ['ipc'] : [])],
    });
    children.add(child);
    child.once('exit', () => children.delete(child));
    child.heapWaiters = [];
    let partial = '';
    child.stderr.on('data', (chunk) => {
      const lines = (partial + chunk).split('\n');
      partial = lines.pop();
      for (const line of lines) {
        const heap = /^heap (\{.*\})$/.exec(line);
        if (heap && child.heapWaiters.length > 0) child.heapWaiters.shift()(JSON.parse(heap[1]));
        else process.stderr.write(`[${script.split('/').pop()} ${child.pid}] ${line}\n`);
      }
    });
    return child;
  }

  /** A private redis-server on a free port (never 6379), no persistence. */
  async function startRedis() {
    const port = await freePort();
    const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    children.add(child);
    child.once('exit', () => children.delete(child));
    await new Promise((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (chunk) => {
        out += chunk;
        if (out.includes('Ready to accept connections')) resolve();
      });
      child.once('exit', (code) => reject(new Error(`redis-server exited (${code})`)));
    });
    return { url: `redis://127.0.0.1:${port}`, child };
  }

  /**
   * One server process: the hub (`dist/main.js`) or the baseline; `env` adds hub settings,
   * `processEnv` environment for either (e.g. a preloaded library).
   */
  async function startServer(kind, redisUrl, env = {}, processEnv = {}) {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const common = { PORT: String(port), HOST: '127.0.0.1', ...(redisUrl ? { REDIS_URL: redisUrl } : {}), ...processEnv };
    const child =
      kind === 'hub'
        ? spawnNode(args.hub ?? 'dist/main.js', { ...hubEnv, ...common, ...env }, { nodeFlags: HUB_NODE_FLAGS })
        : args.versus
          ? spawnNode(args.versus, { ...hubEnv, ...common, ...env }, { nodeFlags: args['versus-node-flags']?.split(' ') ?? HUB_NODE_FLAGS })
          : spawnNode('bench/baseline.mjs', { ...common, JWT_SECRET: secret, ADAPTER: args.adapter ?? 'sharded' });
    child.stdout.resume();
    const exited = new Promise((_, reject) => child.once('exit', (code) => reject(new Error(`${kind} exited early (${code})`))));
    exited.catch(() => {});
    const ready = kind === 'hub' || args.versus ? `${url}/health/ready` : url;
    await Promise.race([waitUntil(async () => (await fetch(ready)).ok, 20_000, `${kind} on ${url}`), exited]);
    return { kind, url, child, pid: child.pid };
  }

  /** A generator process and a typed call into it. */
  function startGenerator() {
    const child = spawnNode('bench/generator.mjs', {}, { ipc: true });
    child.stdout.resume();
    return generatorClient(child);
  }

  return { children, startServer, startRedis, startGenerator };
}

/** Bytes the server process has allocated on its V8 heap so far (bench/gc-signal.cjs, SIGWINCH). */
export function allocatedBytes(server) {
  return heapOf(server).then((heap) => heap.allocated);
}

/** The server's heap line (bench/gc-signal.cjs, SIGWINCH): MiB in use by kind, and bytes allocated so far. */
export function heapOf(server) {
  const reply = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no heap line from ${server.kind} ${server.pid} within 10 s`)), 10_000);
    server.child.heapWaiters.push((heap) => {
      clearTimeout(timer);
      resolve(heap);
    });
  });
  process.kill(server.pid, 'SIGWINCH');
  return reply;
}

/** A plain full GC in the server (bench/gc-signal.cjs, SIGUSR2). */
export async function gcOf(server) {
  process.kill(server.pid, 'SIGUSR2');
  await sleep(500);
}

async function waitUntil(check, timeoutMs, what) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

/**
 * RSS of the server after a plain full GC (`afterGc`), then after a memory-reducing full GC that
 * also gives back the young generation's unused space (`retained`); see gc-signal.cjs.
 */
export async function settledRss(pid) {
  process.kill(pid, 'SIGUSR2');
  await sleep(1000);
  const afterGc = rssBytes(pid);
  process.kill(pid, 'SIGURG');
  await sleep(1000);
  return { afterGc, retained: rssBytes(pid) };
}
