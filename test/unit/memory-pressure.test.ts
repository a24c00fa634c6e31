import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findCgroupMemory } from '../../src/limits/cgroup-memory';
import { MemoryPressure } from '../../src/limits/memory-pressure';

const MiB = 2 ** 20;

/** A fake /proc/self/cgroup and cgroup mount in a temporary directory, laid out as the kernel does. */
function layout(procSelfCgroup: string, files: Record<string, string>): { proc: string; root: string } {
  const dir = mkdtempSync(join(tmpdir(), 'cgroup-'));
  const root = join(dir, 'sys-fs-cgroup');
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  writeFileSync(join(dir, 'cgroup'), procSelfCgroup);
  return { proc: join(dir, 'cgroup'), root };
}

describe('findCgroupMemory', () => {
  it('cgroup v2: memory.max, and memory.current less inactive_file as usage', () => {
    const { proc, root } = layout('0::/kubepods/pod1/hub\n', {
      'kubepods/pod1/hub/memory.max': `${512 * MiB}\n`,
      'kubepods/pod1/hub/memory.current': `${300 * MiB}\n`,
      'kubepods/pod1/hub/memory.stat': `anon ${250 * MiB}\nactive_file ${10 * MiB}\ninactive_file ${40 * MiB}\n`,
    });
    const cgroup = findCgroupMemory(proc, root)!;
    expect(cgroup.limit).toBe(512 * MiB);
    expect(cgroup.usage()).toBe(260 * MiB);
  });

  it('cgroup v2 in a cgroup namespace (/proc/self/cgroup says "/"): the mount itself; "max" is no limit', () => {
    const files = { 'memory.max': `${256 * MiB}\n`, 'memory.current': `${100 * MiB}\n`, 'memory.stat': 'inactive_file 0\n' };
    const { proc, root } = layout('0::/\n', files);
    expect(findCgroupMemory(proc, root)!.limit).toBe(256 * MiB);
    const unlimited = layout('0::/\n', { ...files, 'memory.max': 'max\n' });
    expect(findCgroupMemory(unlimited.proc, unlimited.root)).toBeNull();
  });

  it("cgroup v1 under Docker: the host's path is not mounted, the container's cgroup is the mount", () => {
    const { proc, root } = layout('12:pids:/docker/abc\n4:memory:/docker/abc\n0::/system.slice/containerd.service\n', {
      'memory/memory.limit_in_bytes': `${512 * MiB}\n`,
      'memory/memory.usage_in_bytes': `${200 * MiB}\n`,
      'memory/memory.stat': `cache ${30 * MiB}\ninactive_file ${1 * MiB}\ntotal_inactive_file ${20 * MiB}\n`,
    });
    const cgroup = findCgroupMemory(proc, root)!;
    expect(cgroup.limit).toBe(512 * MiB);
    expect(cgroup.usage()).toBe(180 * MiB);
  });

  it('cgroup v1 without a limit (2^63 rounded down to a page), or no cgroup file at all: none', () => {
    const { proc, root } = layout('4:memory:/user.slice\n', { 'memory/user.slice/memory.limit_in_bytes': '9223372036854771712\n' });
    expect(findCgroupMemory(proc, root)).toBeNull();
    expect(findCgroupMemory(join(root, 'missing'), root)).toBeNull();
  });
});

describe('MemoryPressure', () => {
  function pressure(usage: { bytes: number; heap?: number }, high = 0.85, low = 0.75) {
    return new MemoryPressure({
      limitBytes: 0,
      highWaterRatio: high,
      lowWaterRatio: low,
      cgroup: { limit: 1000, usage: () => usage.bytes },
      heap: () => ({ used: usage.heap ?? 0, limit: 100 }),
    });
  }

  it('is over from the high mark until usage is below the low one (hysteresis), emitting each crossing once', () => {
    const usage = { bytes: 700 };
    const p = pressure(usage);
    const changes: boolean[] = [];
    p.on('change', (over) => changes.push(over));
    const steps = [800, 849, 850, 900, 800, 751, 750, 749, 800, 849];
    const states = steps.map((bytes) => ((usage.bytes = bytes), p.check()));
    expect(states).toEqual([false, false, true, true, true, true, true, false, false, false]);
    expect(changes).toEqual([true, false]);
    expect([p.limit, p.source, p.headroom()]).toEqual([1000, 'cgroup', 151]);
  });

  it("counts V8's heap against its own limit too: the larger share decides", () => {
    const usage = { bytes: 100, heap: 50 };
    const p = pressure(usage);
    expect(p.check()).toBe(false);
    usage.heap = 86;
    expect([p.check(), p.share()]).toEqual([true, 0.86]);
    usage.heap = 74;
    expect(p.check()).toBe(false);
  });

  it('never over with MEMORY_HIGH_WATER_RATIO 0, whatever the usage', () => {
    const p = pressure({ bytes: 2000 }, 0, 0.75);
    expect(p.check()).toBe(false);
    expect(p.headroom()).toBe(-1000);
  });

  it('MEMORY_LIMIT_BYTES wins over the cgroup and is measured against RSS; without either, the machine', () => {
    const set = new MemoryPressure({
      limitBytes: 64 * MiB,
      highWaterRatio: 0.85,
      lowWaterRatio: 0.75,
      cgroup: { limit: 1, usage: () => 1 },
    });
    expect([set.limit, set.source]).toEqual([64 * MiB, 'setting']);
    const rss = process.memoryUsage.rss();
    expect(Math.abs(set.usage() - rss)).toBeLessThan(16 * MiB);
    const machine = new MemoryPressure({ limitBytes: 0, highWaterRatio: 0.85, lowWaterRatio: 0.75, cgroup: null });
    expect(machine.source).toBe('machine');
  });
});
