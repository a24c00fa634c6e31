import { fork } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { HostileConfig } from './hostile';
import type { HostileSummary } from './records';
import { sleep } from '../helpers/wait';

export interface HostileTenant {
  /** Stops the flood; resolves with what it sent once the process has written its counts. */
  stop(timeoutMs: number): Promise<HostileSummary | undefined>;
}

/** Forks the hostile tenant (hostile.ts built by scripts/soak.mjs) and waits until it floods. */
export async function startHostile(options: Omit<HostileConfig, 'summaryFile'> & { script: string; dir: string }): Promise<HostileTenant> {
  const { script, dir, ...rest } = options;
  const config: HostileConfig = { ...rest, summaryFile: join(dir, 'hostile.json') };
  const child = fork(script, [], {
    env: { ...process.env, SOAK_HOSTILE: JSON.stringify(config) },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const kill = () => child.kill('SIGKILL');
  process.on('exit', kill);
  await new Promise<void>((resolve, reject) => {
    child.once('message', () => resolve());
    child.once('exit', () => reject(new Error('the hostile tenant exited before it connected')));
  });
  const read = (): HostileSummary | undefined =>
    existsSync(config.summaryFile) ? (JSON.parse(readFileSync(config.summaryFile, 'utf8')) as HostileSummary) : undefined;
  return {
    async stop(timeoutMs) {
      if (child.connected) {
        const quiet = new Promise((resolve) => child.once('message', resolve));
        child.send({ quiet: true });
        await Promise.race([quiet, sleep(timeoutMs)]);
      }
      kill();
      process.off('exit', kill);
      return read();
    },
  };
}
