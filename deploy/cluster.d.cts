// Types for cluster.cjs, so TypeScript tests can `import { startCluster } from '../../deploy/cluster.cjs'`.

export interface ClusterOptions {
  /** Hub replicas behind nginx (default 3). */
  replicas?: number;
  /** nginx listen port; 0 or absent picks a free one (the CLI uses CLUSTER_PORT, default 8080). */
  port?: number;
  /** nginx listen address (default 127.0.0.1). Hubs and Redis always bind 127.0.0.1. */
  host?: string;
  /**
   * Hub environment on top of the defaults (NODE_ENV=production, TRUST_PROXY=loopback,
   * CORS_ORIGINS=the cluster's origin, SHUTDOWN_GRACE_MS=20000). JWT_SECRET / AGENT_API_KEYS given
   * here are used, otherwise generated. PORT, HOST and the Redis topology keys are always set by the runner.
   */
  env?: Record<string, string | undefined>;
  /**
   * Redis topology (docs/deployment.md): `single` (default, one redis-server, REDIS_URL), `sentinel` (1 master
   * + 1 replica + 3 Sentinels, REDIS_SENTINELS) or `cluster` (3 masters + 3 replicas,
   * REDIS_CLUSTER_NODES). With sentinel or cluster, `redis` of the handle is not started.
   */
  redis?: 'single' | 'sentinel' | 'cluster';
  /** Hub entry point (default dist/main.js). */
  hubEntry?: string;
  /** How long each process may take to become ready (default 30000 ms). */
  readyTimeoutMs?: number;
  /** Every output line of every process (nginx access log excepted: see nginx.accessLog). */
  onLog?: (name: string, line: string) => void;
}

export interface ExitStatus {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface ReplicaHandle {
  index: number;
  /** hub-1, hub-2, … */
  name: string;
  port: number;
  /** Direct URL of this replica, bypassing nginx. */
  url: string;
  /** Current process id (changes on restart). */
  readonly pid: number | undefined;
  readonly running: boolean;
  /** Resolves when the current process exits. */
  readonly exited: Promise<ExitStatus>;
  /** The last 200 output lines. */
  logs(): string[];
  /** Sends a signal (default SIGTERM) and resolves when the process has exited. */
  kill(signal?: NodeJS.Signals): Promise<ExitStatus>;
  /** SIGTERM, SIGKILL if still running SHUTDOWN_GRACE_MS + 5 s later. */
  stop(): Promise<ExitStatus>;
  /** Starts the replica again on the same port; resolves when /health/ready answers 200. */
  start(): Promise<void>;
  /** stop() then start(). */
  restart(): Promise<void>;
}

export interface ClusterHandle {
  /** nginx origin, e.g. http://127.0.0.1:8080 — what SDKs and REST clients use. */
  url: string;
  port: number;
  /** Temp dir with Redis data, nginx prefix and logs; removed by stop(). */
  dir: string;
  secrets: { JWT_SECRET: string; ADMIN_JWT_SECRET: string; AGENT_API_KEYS: string };
  /** Environment shared by the hubs (without PORT). */
  env: Record<string, string | undefined>;
  replicas: ReplicaHandle[];
  redis: {
    port: number;
    url: string;
    readonly pid: number | undefined;
    logs(): string[];
    kill(signal?: NodeJS.Signals): Promise<ExitStatus>;
    stop(): Promise<ExitStatus>;
    /** Starts Redis again on the same port and data dir (the AOF is replayed). */
    start(): Promise<void>;
  };
  nginx: {
    port: number;
    accessLog: string;
    readonly pid: number | undefined;
    logs(): string[];
    stop(): Promise<ExitStatus>;
  };
  /** SIGTERM to the hubs and wait for them, then nginx, then Redis; removes the temp dir. Idempotent. */
  stop(): Promise<void>;
  /** SIGKILL to every process group at once. */
  forceStop(): void;
}

export interface NginxLayout {
  /** nginx -p prefix (ends with /). */
  prefix: string;
  confFile: string;
  pidFile: string;
}

export function startCluster(options?: ClusterOptions): Promise<ClusterHandle>;
/** Writes an nginx prefix under dir that runs deploy/nginx.conf with the given listen and servers. */
export function writeNginxConfig(dir: string, config: { listen: string; servers: string[] }): NginxLayout;
export function nginxArgs(layout: NginxLayout, options?: { test?: boolean }): string[];
/** `nginx -t` on a layout. */
export function testNginxConfig(layout: NginxLayout, bin?: string): Promise<{ ok: boolean; output: string }>;
export function nginxBinary(): string;
export function redisBinary(): string;
export function freePort(host?: string): Promise<number>;
/** Absolute path of deploy/nginx.conf. */
export const NGINX_CONF: string;
/** The node flags the hub runs with (deploy/Dockerfile's CMD, `npm start`, the local cluster, the bench). */
export const HUB_NODE_FLAGS: readonly string[];
