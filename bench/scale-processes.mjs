// The processes of one scale measurement (bench/scale.mjs, bench/heap-per-client.mjs): servers,
// generators and a private redis-server, started under a raised file-descriptor limit and all killed
// at its end; the source addresses the clients are spread over; and /proc readings of a process.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generatorClient } from './generator-client.mjs';
import { benchHubEnv } from './hub-env.mjs';
import { cpuMs, sleep, stop } from './proc.mjs';

const { freePort } = createRequire(import.meta.url)('../deploy/cluster.cjs');

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
/** Clients per loopback source address: one address has ~28,000 ephemeral ports (32768–60999). */
const PER_ADDRESS = 10_000;
/** A generator's longest call (a connect burst of its share under a loaded machine). */
const CALL_TIMEOUT_MS = 15 * 60_000;

/** The scale bench's progress lines, on stderr. */
export const log = (line) => process.stderr.write(`[scale] ${line}\n`);

/** User + system CPU seconds of a process. */
export const cpuSeconds = (pid) => cpuMs(pid) / 1000;

/** Every {@link Processes} not stopped yet: killed when this process exits, however it exits. */
const live = new Set();
process.on('exit', () => {
  for (const procs of live) for (const child of procs.children) child.kill('SIGKILL');
});

/** The child processes of one measurement, all killed at its end (or when this process exits). */
export class Processes {
  children = new Set();

  constructor(nofile) {
    this.nofile = nofile;
    live.add(this);
  }

  /** `node [flags] script` with the file-descriptor limit raised (as root) for 50,000 sockets. */
  spawn(script, env, { ipc = false, nodeFlags = [] } = {}) {
    const sh = `ulimit -Hn ${this.nofile} && ulimit -n ${this.nofile} && exec "$0" "$@"`;
    const child = spawn('sh', ['-c', sh, process.execPath, ...nodeFlags, script], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe', ...(ipc ? ['ipc'] : [])],
    });
    this.children.add(child);
    child.once('exit', () => this.children.delete(child));
    // The servers log at warn (hub) or not at all (baseline): whatever they say goes to the log.
    child.stdout.on('data', (chunk) => process.stderr.write(`[${script.split('/').pop()} ${child.pid}] ${chunk}`));
    child.stderr.on('data', (chunk) => process.stderr.write(`[${script.split('/').pop()} ${child.pid}] ${chunk}`));
    return child;
  }

  /** Last started first: generators, then servers, then Redis, so no server logs its Redis vanishing. */
  async stopAll() {
    for (const child of [...this.children].reverse()) await stop(child);
    live.delete(this);
  }
}

export function generator(procs) {
  const child = procs.spawn('bench/generator.mjs', {}, { ipc: true, nodeFlags: ['--max-old-space-size=4096'] });
  return generatorClient(child, CALL_TIMEOUT_MS);
}

/** A private redis-server on a free port (never 6379), no persistence; killed with the others. */
export async function startRedis(procs) {
  const port = await freePort();
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  procs.children.add(child);
  child.once('exit', () => procs.children.delete(child));
  child.stderr.resume();
  await new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error('redis-server did not start within 10 s')), 10_000);
    child.stdout.on('data', (chunk) => {
      out += chunk;
      if (out.includes('Ready to accept connections')) {
        clearTimeout(timer);
        child.stdout.resume();
        resolve();
      }
    });
    child.once('exit', (code) => reject(new Error(`redis-server exited (${code})`)));
  });
  return { url: `redis://127.0.0.1:${port}`, port, child, pid: child.pid };
}

/** The source addresses of `clients` clients, from 127.0.0.`base` on: one per PER_ADDRESS clients. */
export function clientAddresses(clients, base) {
  return Array.from({ length: Math.ceil(clients / PER_ADDRESS) }, (_, i) => `127.0.0.${base + i}`);
}

/** `total` split into `parts` near-equal shares; share `i`. */
export const share = (total, parts, i) => Math.floor(total / parts) + (i < total % parts ? 1 : 0);

/** Fresh secrets, the bots' ids and the hub's bench settings: what every server of a measurement shares. */
export function scaleEnv(hubScript) {
  const secret = randomBytes(32).toString('hex');
  const apiKey = randomBytes(16).toString('hex');
  return {
    secret,
    apiKey,
    agentIds: Array.from({ length: 20 }, (_, i) => `bot-${i}`),
    idleAgentIds: Array.from({ length: 100 }, (_, i) => `idle-${i}`),
    hubScript,
    hub: benchHubEnv({
      JWT_SECRET: secret,
      AGENT_API_KEYS: apiKey,
      MAX_CONNECTIONS: '0',
      OPENAPI_SPEC_FILE: join(ROOT, 'bench', 'results', 'openapi.json'),
    }),
  };
}

export async function startServer(procs, kind, env, nodeFlags, redisUrl = undefined) {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const common = { PORT: String(port), HOST: '127.0.0.1', ...(redisUrl ? { REDIS_URL: redisUrl } : {}) };
  const flags = ['--expose-gc', '--require', join(ROOT, 'bench', 'gc-signal.cjs'), ...nodeFlags];
  const child =
    kind === 'hub'
      ? procs.spawn(env.hubScript, { ...env.hub, ...common }, { nodeFlags: flags })
      : procs.spawn('bench/baseline.mjs', { ...common, JWT_SECRET: env.secret, ADAPTER: 'sharded' }, { nodeFlags: flags });
  const exited = new Promise((_, reject) => child.once('exit', (code) => reject(new Error(`${kind} exited early (${code})`))));
  exited.catch(() => {});
  const ready = kind === 'hub' ? `${url}/health/ready` : url;
  const deadline = Date.now() + 60_000;
  const up = (async () => {
    for (;;) {
      if (
        await fetch(ready).then(
          (r) => r.ok,
          () => false,
        )
      )
        return;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${kind} on ${url}`);
      await sleep(100);
    }
  })();
  await Promise.race([up, exited]);
  return { kind, url, child, pid: child.pid, exited };
}
