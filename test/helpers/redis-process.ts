import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import Redis from 'ioredis';
import { waitFor } from './wait';

/** One redis-server (or sentinel) process a test owns. */
export interface RedisProcess {
  port: number;
  /** SIGKILL, like a crash; resolves when the process is gone. */
  kill(): Promise<void>;
  alive(): boolean;
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

export function spawnRedis(args: string[], port: number): RedisProcess & { pid: number | undefined } {
  const child: ChildProcess = spawn('redis-server', args, { stdio: 'ignore' });
  child.on('error', () => {});
  return {
    port,
    pid: child.pid,
    alive: () => child.exitCode === null && child.signalCode === null,
    async kill() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGKILL');
      await gone;
    },
  };
}

/**
 * A redis-server (or Sentinel) on a port `pick` finds free, once it answers there itself (its
 * `process_id`: whatever else holds the port may answer too). Between the check and the server's
 * bind another process of the suite may take the port, and the server then exits: it is started
 * again on another port.
 */
export async function startListening(
  pick: () => Promise<number>,
  argsFor: (port: number) => string[],
  what: string,
  /** Gets the server once it is up, for whoever stops what was started. */
  started: RedisProcess[] = [],
): Promise<RedisProcess> {
  for (let attempt = 1; ; attempt++) {
    const port = await pick();
    const server = spawnRedis(argsFor(port), port);
    // Until it exits (the port was taken: another port) or answers as this process; refusals mean "not yet".
    const outcome = await waitFor(
      async () => {
        if (!server.alive()) return 'exited';
        const info = await command<string>(port, 'INFO', 'server').catch(() => '');
        return info.includes(`process_id:${server.pid}\r`) && 'up';
      },
      10_000,
      `${what} on ${port}`,
    );
    if (outcome === 'up') {
      started.push(server);
      return server;
    }
    if (attempt === 5) throw new Error(`${what} exited at start five times (ports taken?)`);
  }
}

export async function command<T>(port: number, ...args: (string | number)[]): Promise<T> {
  const client = new Redis({
    port,
    host: '127.0.0.1',
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    // Whatever answers on a port that is not (yet) ours may never reply.
    connectTimeout: 2000,
    commandTimeout: 2000,
  });
  client.on('error', () => {});
  try {
    await client.connect();
    return (await client.call(String(args[0]), ...args.slice(1).map(String))) as T;
  } finally {
    client.disconnect();
  }
}
