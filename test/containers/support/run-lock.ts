// One container-tier run at a time per machine. The tier owns machine-wide names: the image tag
// docker-compose.yml runs (`relay-hub:local`) and the leftovers the global set-up removes. Two runs at
// once (two checkouts on one shared machine) would rebuild each other's image under that tag and
// remove each other's compose stacks as "leftovers". The global set-up takes this lock before it
// touches anything; the global tear-down frees it; a lock whose owner died is taken over.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sleep } from '../../helpers/wait';

const LOCK_DIR = join(tmpdir(), 'relay-hub-container-tier.lock');
const OWNER_FILE = join(LOCK_DIR, 'owner');
const POLL_MS = 2_000;
const REPORT_EVERY_MS = 30_000;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The owner recorded in the lock, or undefined when there is no lock (or it is being written). */
function owner(): { pid: number; root: string } | undefined {
  try {
    const [pid, root] = readFileSync(OWNER_FILE, 'utf8').split('\n');
    return { pid: Number(pid), root: root ?? '' };
  } catch {
    return undefined;
  }
}

/** Waits until no other live container-tier run holds the lock, then holds it for this process. */
export async function acquireRunLock(root: string): Promise<void> {
  let reported = 0;
  for (;;) {
    try {
      mkdirSync(LOCK_DIR);
      writeFileSync(OWNER_FILE, `${process.pid}\n${root}`);
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const holder = owner();
    if (holder && !alive(holder.pid)) {
      rmSync(LOCK_DIR, { recursive: true, force: true });
      continue;
    }
    if (Date.now() - reported >= REPORT_EVERY_MS) {
      reported = Date.now();
      const who = holder ? `pid ${holder.pid} in ${holder.root}` : 'a run starting';
      process.stderr.write(`[containers] another container-tier run holds ${LOCK_DIR} (${who}); waiting\n`);
    }
    await sleep(POLL_MS);
  }
}

/** Frees the lock if this process holds it. */
export function releaseRunLock(): void {
  if (owner()?.pid === process.pid) rmSync(LOCK_DIR, { recursive: true, force: true });
}
