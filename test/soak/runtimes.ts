import { fork, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RuntimeRecord } from './records';
import type { RuntimeConfig } from './runtime';
import { sleep } from '../helpers/wait';

export interface RuntimePool {
  /** SIGKILL of runtime `index` (mid-stream, mid-reply: whatever it was doing); a new process `downMs` later. */
  kill(index: number, downMs: number): Promise<void>;
  /** Stops the broadcasts; resolves once every runtime has no reply under way (or after `timeoutMs`). */
  quiet(timeoutMs: number): Promise<void>;
  /** Every record of every runtime process of the run. */
  records(): RuntimeRecord[];
  /** Runtime processes that exited without being killed by the schedule. */
  crashes: string[];
  stop(): Promise<void>;
}

export interface RuntimePoolOptions {
  /** The bundled runtime entry (runtime.ts built by scripts/soak.mjs). */
  script: string;
  dir: string;
  count: number;
  url: string;
  apiKey: string;
  bots: string[];
  broadcastEveryMs: number;
  streamEvery: number;
}

/** `count` runtime processes, each serving every bot; resolves once all are connected. */
export async function startRuntimes(options: RuntimePoolOptions): Promise<RuntimePool> {
  const current: (ChildProcess | undefined)[] = [];
  const generations: number[] = [];
  const crashes: string[] = [];
  let stopping = false;
  const killAll = () => current.forEach((c) => c?.kill('SIGKILL'));
  process.on('exit', killAll);

  const spawn = (index: number) => {
    const gen = (generations[index] = (generations[index] ?? 0) + 1);
    const rt = `rt${index}#${gen}`;
    const config: RuntimeConfig = {
      url: options.url,
      apiKey: options.apiKey,
      bots: options.bots,
      rt,
      recordFile: join(options.dir, `${rt.replace('#', '-')}.jsonl`),
      broadcastEveryMs: options.broadcastEveryMs,
      streamEvery: options.streamEvery,
    };
    const child = fork(options.script, [], {
      env: { ...process.env, SOAK_RUNTIME: JSON.stringify(config) },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    current[index] = child;
    const expected = { killed: false };
    child.once('exit', (code, signal) => {
      if (!expected.killed && !stopping) crashes.push(`${rt} exited (${code ?? signal})`);
    });
    const ready = new Promise<void>((resolve, reject) => {
      child.once('message', () => resolve());
      child.once('exit', () => reject(new Error(`${rt} exited before connecting`)));
    });
    return { child, expected, ready };
  };
  const live: { expected: { killed: boolean } }[] = [];
  const first = Array.from({ length: options.count }, (_, i) => spawn(i));
  first.forEach((s, i) => (live[i] = s));
  await Promise.all(first.map((s) => s.ready));

  return {
    async kill(index, downMs) {
      const child = current[index];
      if (!child || child.exitCode !== null || child.signalCode !== null) return;
      live[index].expected.killed = true;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
      await sleep(downMs);
      if (stopping) return;
      const next = spawn(index);
      live[index] = next;
      // Not awaited: a runtime reconnecting through a fault may take a while; the traffic goes on.
      next.ready.catch(() => {});
    },
    async quiet(timeoutMs) {
      const answers = current.flatMap((child) => {
        if (!child?.connected) return [];
        const answered = new Promise<void>((resolve) => child.on('message', (m: { quiet?: boolean }) => m.quiet && resolve()));
        child.send({ quiet: true });
        return [answered];
      });
      await Promise.race([Promise.all(answers), sleep(timeoutMs)]);
    },
    records() {
      return readdirSync(options.dir)
        .filter((f) => f.startsWith('rt') && f.endsWith('.jsonl'))
        .flatMap((f) =>
          readFileSync(join(options.dir, f), 'utf8')
            .split('\n')
            .filter((line) => line.length > 0)
            .flatMap((line) => {
              try {
                return [JSON.parse(line) as RuntimeRecord];
              } catch {
                return []; // a line cut by SIGKILL mid-write
              }
            }),
        );
    },
    crashes,
    async stop() {
      stopping = true;
      await Promise.all(
        current.flatMap((child) => {
          if (!child || child.exitCode !== null || child.signalCode !== null) return [];
          const exited = new Promise((resolve) => child.once('exit', resolve));
          child.kill('SIGTERM');
          return [exited];
        }),
      );
      process.off('exit', killAll);
    },
  };
}
