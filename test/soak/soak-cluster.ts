import { randomBytes } from 'node:crypto';
import { closeSync, openSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { freePort, HUB_NODE_FLAGS, nginxArgs, nginxBinary, testNginxConfig, writeNginxConfig } from '../../deploy/cluster.cjs';
import { httpOk, ManagedProcess, waitUntil } from '../../deploy/managed-process.cjs';
import type { ResourceSamples, UnexpectedExit } from './records';
import type { SoakNetns } from './netns';
import type { SoakRedis } from './topology';

const ROOT = resolve(__dirname, '..', '..');

/** The hubs' STREAM_IDLE_TIMEOUT_MS: a killed replica's streams end within it, before the checker reads the logs. */
export const STREAM_IDLE_TIMEOUT_MS = 10_000;

/** Hub settings of a soak: the cluster tests' short timers, a log long enough to hold the whole run. */
export const SOAK_HUB_ENV: Record<string, string> = {
  NODE_ENV: 'production',
  LOG_LEVEL: process.env.SOAK_HUB_LOG_LEVEL ?? 'warn',
  DEMO_ENABLED: 'false',
  API_DOCS_ENABLED: 'false',
  PRESENCE_TTL_S: '3',
  AGENT_ACK_TIMEOUT_MS: '3000',
  AGENT_RECONNECT_GRACE_MS: '3000',
  SHUTDOWN_GRACE_MS: '4000',
  HISTORY_MAX_MESSAGES: '10000',
  // A dead replica's streams end within it (its runtimes' streams, by another replica's sweep).
  STREAM_IDLE_TIMEOUT_MS: String(STREAM_IDLE_TIMEOUT_MS),
  // A bot's delivery budget at 2,000/s (default 5,000): the soak's bots cause about 100 deliveries a
  // second a replica, and the hostile tenant, on a machine the whole run shares, must still reach it.
  AGENT_DELIVERY_RATE_PER_S: '2000',
  AGENT_DELIVERY_RATE_BURST: '500',
};

export interface SoakReplica {
  index: number;
  name: string;
  url: string;
  readonly pid: number | undefined;
  readonly running: boolean;
  /** Starts (again) on the same address; resolves when /health/ready answers 200. */
  start(): Promise<void>;
  /** A signal the schedule sends: the exit it causes is expected. */
  kill(signal: NodeJS.Signals): Promise<void>;
  freeze(): void;
  thaw(): void;
  stop(): Promise<void>;
}

export interface SoakCluster {
  url: string;
  secrets: { JWT_SECRET: string; AGENT_API_KEYS: string };
  replicas: SoakReplica[];
  unexpectedExits: UnexpectedExit[];
  resources(): ResourceSamples[];
  stop(): Promise<void>;
  /** SIGKILL to every process group (exit handler). */
  forceStop(): void;
}

export interface SoakClusterOptions {
  dir: string;
  replicas: number;
  redis: SoakRedis;
  /** When set, the last replica runs in this namespace, reached through its veth address. */
  netns?: SoakNetns;
  env?: Record<string, string>;
  onLog?: (name: string, line: string) => void;
  /**
   * nginx's `max_fails` per replica in place of deploy/cluster.cjs's 3 (0: never mark a replica
   * failed), to measure what passive health checks cost after an outage.
   */
  edgeMaxFails?: number;
}

/** Three (or `replicas`) hub processes on the soak's Redis, nginx in front, each replica watched. */
export async function startSoakCluster(options: SoakClusterOptions): Promise<SoakCluster> {
  const { dir, netns, onLog } = options;
  const hubEntry = join(ROOT, 'dist', 'main.js');
  const started: ManagedProcess[] = [];
  const unexpectedExits: UnexpectedExit[] = [];
  const samples: ResourceSamples[] = [];
  const port = await freePort('127.0.0.1');
  const url = `http://127.0.0.1:${port}`;
  const secrets = { JWT_SECRET: randomBytes(48).toString('base64url'), AGENT_API_KEYS: `ak_${randomBytes(32).toString('base64url')}` };
  const env = {
    ...process.env,
    ...SOAK_HUB_ENV,
    TRUST_PROXY: 'loopback',
    CORS_ORIGINS: url,
    ...options.env,
    ...secrets,
    ADMIN_JWT_SECRET: randomBytes(48).toString('base64url'),
    ...options.redis.env,
  };
  let stopping = false;

  const replicas: SoakReplica[] = [];
  for (let i = 0; i < options.replicas; i++) {
    const name = `hub-${i + 1}`;
    const inNetns = netns !== undefined && i === options.replicas - 1;
    const host = inNetns ? netns.nsAddress : '127.0.0.1';
    const hubPort = await freePort('127.0.0.1');
    const nodeArgs = [...HUB_NODE_FLAGS, hubEntry];
    const [command, ...args] = inNetns ? [...netns.exec, process.execPath, ...nodeArgs] : [process.execPath, ...nodeArgs];
    const proc = new ManagedProcess(name, command, args, {
      onLog,
      cwd: ROOT,
      env: { ...env, HOST: host, PORT: String(hubPort), OPENAPI_SPEC_FILE: join(dir, `${name}.openapi.json`) },
    });
    started.push(proc);
    const replicaUrl = `http://${host}:${hubPort}`;
    const sampled: ResourceSamples = { replica: name, instances: [] };
    samples.push(sampled);
    let expected = false;
    const replica: SoakReplica = {
      index: i,
      name,
      url: replicaUrl,
      get pid() {
        return proc.pid;
      },
      get running() {
        return proc.running;
      },
      async start() {
        expected = false;
        proc.tail = [];
        proc.start();
        const exited = proc.exited;
        void exited.then(({ code, signal }) => {
          if (expected || stopping) return;
          unexpectedExits.push({ replica: name, code, signal, at: Date.now() });
          // Keep the run going; the checker fails it for this exit.
          setTimeout(() => void replica.start().catch(() => {}), 1000);
        });
        await waitUntil(proc, 'ready', () => httpOk(`${replicaUrl}/health/ready`), 60_000);
        const pid = proc.pid!;
        const first = readResources(pid);
        sampled.instances.push({ pid, baseRss: first.rss, baseFds: first.fds, peakRss: first.rss, peakFds: first.fds, ...last(first) });
      },
      async kill(signal) {
        expected = true;
        await proc.kill(signal);
      },
      freeze: () => proc.pid !== undefined && process.kill(proc.pid, 'SIGSTOP'),
      thaw: () => proc.pid !== undefined && process.kill(proc.pid, 'SIGCONT'),
      async stop() {
        expected = true;
        if (proc.pid !== undefined && proc.running) process.kill(proc.pid, 'SIGCONT');
        await proc.stop('SIGTERM', 15_000);
      },
    };
    replicas.push(replica);
  }

  const forceStop = () => started.forEach((p) => p.killGroup('SIGKILL'));
  process.on('exit', forceStop);
  let sampler: NodeJS.Timeout | undefined;
  try {
    await Promise.all(replicas.map((r) => r.start()));
    const layout = writeNginxConfig(dir, {
      listen: `127.0.0.1:${port}`,
      servers: replicas.map((r) => r.url.replace('http://', '')),
    });
    if (options.edgeMaxFails !== undefined) {
      const servers = join(layout.prefix, 'conf', 'relay-hub', 'servers.conf');
      writeFileSync(servers, readFileSync(servers, 'utf8').replace(/max_fails=\d+/g, `max_fails=${options.edgeMaxFails}`));
    }
    const checked = await testNginxConfig(layout);
    if (!checked.ok) throw new Error(`nginx -t failed:\n${checked.output}`);
    const accessLog = openSync(join(layout.prefix, 'access.log'), 'a');
    const nginx = new ManagedProcess('nginx', nginxBinary(), nginxArgs(layout), { onLog, stdoutFd: accessLog });
    started.push(nginx);
    nginx.start();
    closeSync(accessLog);
    await waitUntil(nginx, 'proxying', () => httpOk(`${url}/health/ready`), 30_000);

    sampler = setInterval(() => {
      replicas.forEach((r, i) => {
        const instance = samples[i].instances.at(-1);
        if (!r.running || instance === undefined || instance.pid !== r.pid) return;
        const now = readResources(instance.pid);
        Object.assign(instance, last(now), { peakRss: Math.max(instance.peakRss, now.rss), peakFds: Math.max(instance.peakFds, now.fds) });
      });
    }, 1000);

    return {
      url,
      secrets,
      replicas,
      unexpectedExits,
      resources: () => samples,
      async stop() {
        stopping = true;
        clearInterval(sampler);
        await Promise.all(replicas.map((r) => r.stop()));
        await nginx.stop('SIGTERM', 5000);
        process.off('exit', forceStop);
      },
      forceStop,
    };
  } catch (err) {
    clearInterval(sampler);
    stopping = true;
    forceStop();
    process.off('exit', forceStop);
    throw err;
  }
}

function last(sample: { rss: number; fds: number }): { lastRss: number; lastFds: number } {
  return { lastRss: sample.rss, lastFds: sample.fds };
}

/** Resident set size (bytes) and open descriptors of a process, from /proc. */
export function readResources(pid: number): { rss: number; fds: number } {
  try {
    const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return { rss: Number(kb?.[1] ?? 0) * 1024, fds: readdirSync(`/proc/${pid}/fd`).length };
  } catch {
    return { rss: 0, fds: 0 };
  }
}
