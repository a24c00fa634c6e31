import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The memory cgroup this process is charged to, as the kernel's OOM killer sees it. */
export interface CgroupMemory {
  /** The cgroup's limit in bytes (`memory.max`, v1 `memory.limit_in_bytes`). */
  limit: number;
  /**
   * Bytes charged to the cgroup that it cannot give back under pressure: `memory.current` (v1
   * `memory.usage_in_bytes`) less the inactive file cache the kernel reclaims before it OOM-kills,
   * the "working set" Kubernetes reports.
   */
  usage(): number;
}

const CGROUP_ROOT = '/sys/fs/cgroup';
/** v1 reports "no limit" as a page-rounded 2^63 - 1; anything this large is no limit. */
const NO_LIMIT = 2 ** 60;

function readText(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

function statField(stat: string | null, field: string): number {
  const match = stat === null ? null : new RegExp(`^${field} (\\d+)$`, 'm').exec(stat);
  return match ? Number(match[1]) : 0;
}

/**
 * The directory of this process's cgroup under `mount`: its path from /proc/self/cgroup when that
 * exists there, else the mount itself (a container sees its own cgroup at the mount point, under a
 * cgroup namespace or Docker's cgroup v1 bind mount, while /proc/self/cgroup names the host's path).
 */
function cgroupDir(mount: string, path: string, probe: string): string | null {
  for (const dir of [join(mount, path), mount]) if (readText(join(dir, probe)) !== null) return dir;
  return null;
}

/**
 * Finds the memory cgroup of this process and its limit (cgroup v2, else v1), or null when there
 * is none with a limit (not in a container, or a container without a memory limit).
 */
export function findCgroupMemory(procSelfCgroup = '/proc/self/cgroup', root = CGROUP_ROOT): CgroupMemory | null {
  const lines = (readText(procSelfCgroup) ?? '').split('\n');
  const v2 = lines.find((l) => l.startsWith('0::'));
  if (v2 !== undefined) {
    const dir = cgroupDir(root, v2.slice(3), 'memory.max');
    const max = dir === null ? null : readText(join(dir, 'memory.max'));
    if (dir !== null && max !== null && /^\d+\s*$/.test(max) && Number(max) < NO_LIMIT) {
      return {
        limit: Number(max),
        usage: () => workingSet(readText(join(dir, 'memory.current')), readText(join(dir, 'memory.stat')), 'inactive_file'),
      };
    }
  }
  const v1 = lines.map((l) => l.split(':')).find((parts) => parts.length >= 3 && parts[1].split(',').includes('memory'));
  if (v1 !== undefined) {
    const mount = join(root, 'memory');
    const dir = cgroupDir(mount, v1.slice(2).join(':'), 'memory.limit_in_bytes');
    const limit = dir === null ? NaN : Number(readText(join(dir, 'memory.limit_in_bytes')));
    if (dir !== null && Number.isFinite(limit) && limit < NO_LIMIT) {
      return {
        limit,
        usage: () => workingSet(readText(join(dir, 'memory.usage_in_bytes')), readText(join(dir, 'memory.stat')), 'total_inactive_file'),
      };
    }
  }
  return null;
}

function workingSet(current: string | null, stat: string | null, inactiveField: string): number {
  const used = Number(current ?? NaN);
  // Unreadable (the cgroup went away under us): this process's own resident memory, a lower bound.
  if (!Number.isFinite(used)) return process.memoryUsage.rss();
  return Math.max(0, used - statField(stat, inactiveField));
}
