import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, startListening, type RedisProcess } from './redis-process';

/** A redis-server the test owns (or the one REDIS_URL names, which it neither stops nor restarts). */
export interface TestRedis {
  url: string;
  port: number;
  /** True when REDIS_URL pointed at an external server: stop/start are unavailable. */
  external: boolean;
  /** Kills the server (SIGKILL, like a crash) and waits for the process to exit. */
  stop(): Promise<void>;
  /** Starts it again on the same port and waits for PING. */
  start(): Promise<void>;
  /** Stops it for good and removes its directory. Safe to call twice. */
  close(): Promise<void>;
}

export { freePort };

/**
 * Spawns `redis-server --port <free> --save "" --appendonly no` in a temp dir and waits until it
 * answers there itself.
 * With REDIS_URL set in the environment, uses that server instead (never the machine's default
 * 127.0.0.1:6379 by accident).
 */
export async function startRedis(options: { pick?: () => Promise<number> } = {}): Promise<TestRedis> {
  const externalUrl = process.env.REDIS_URL;
  if (externalUrl) {
    const port = Number(new URL(externalUrl).port || 6379);
    const unsupported = async () => {
      throw new Error('stop/start need a redis-server owned by the test; unset REDIS_URL');
    };
    return { url: externalUrl, port, external: true, stop: unsupported, start: unsupported, close: async () => {} };
  }
  const dir = mkdtempSync(join(tmpdir(), 'relay-redis-'));
  const argsFor = (port: number) => ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir];
  // The first start may find its port taken by the time it binds (startListening tries another);
  // a restart must come back on the same port, where the hubs under test reconnect.
  let server: RedisProcess | undefined = await startListening(options.pick ?? freePort, argsFor, 'redis-server');
  const port = server.port;
  let closed = false;

  const start = async () => {
    server = await startListening(async () => port, argsFor, 'redis-server');
  };
  const stop = async () => {
    const current = server;
    server = undefined;
    await current?.kill();
  };
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    external: false,
    stop,
    start,
    async close() {
      if (closed) return;
      closed = true;
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
