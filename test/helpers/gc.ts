import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { sleep } from './wait';

/** V8's `gc()` in a test process started without `--expose-gc`: one full collection per call. */
export function exposedGc(): () => void {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

/**
 * Full collections a few turns apart: a dead object's weak references clear, and the memory of dead
 * buffers is freed, only after a collection has run.
 */
export async function collectGarbage(rounds = 3): Promise<void> {
  const gc = exposedGc();
  for (let i = 0; i < rounds; i++) {
    gc();
    await sleep(20);
  }
}
