import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Redis from 'ioredis';

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

/** A free TCP port on 127.0.0.1 (the OS picks it; the socket is closed before returning). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/**
 * Spawns `redis-server --port <free> --save "" --appendonly no` in a temp dir and waits for PING.
 * With REDIS_URL set in the environment, uses that server instead (never the machine's default
 * 127.0.0.1:6379 by accident).
 */
export async function startRedis(): Promise<TestRedis> {
  const externalUrl = process.env.REDIS_URL;
  if (externalUrl) {
    const port = Number(new URL(externalUrl).port || 6379);
    const unsupported = async () => {
      throw new Error('stop/start need a redis-server owned by the test; unset REDIS_URL');
    };
    return { url: externalUrl, port, external: true, stop: unsupported, start: unsupported, close: async () => {} };
  }
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'relay-redis-'));
  let child: ChildProcess | undefined;
  let closed = false;

  const start = async () => {
    const proc = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], {
      stdio: 'ignore',
    });
    child = proc;
    const exited = new Promise<never>((_, reject) =>
      proc.once('exit', (code) => reject(new Error(`redis-server exited early (code ${code})`))),
    );
    exited.catch(() => {});
    await Promise.race([waitForPing(port, 10_000), exited]);
  };
  const stop = async () => {
    const proc = child;
    child = undefined;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    const gone = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
    proc.kill('SIGKILL');
    await gone;
  };
  await start();
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

async function waitForPing(port: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const client = new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    client.on('error', () => {});
    try {
      await client.connect();
      if ((await client.ping()) === 'PONG') return;
    } catch {
      if (Date.now() > deadline) throw new Error(`redis-server on port ${port} did not answer PING within ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    } finally {
      // A refused connection has ended already; disconnecting it again arms a 2 s timer in ioredis
      // that nothing clears, which keeps a short test file's process alive past its end.
      if (client.status !== 'end') client.disconnect();
    }
  }
}
