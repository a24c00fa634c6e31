// What both bench drivers (bench/run.mjs, bench/scale.mjs) read of a process from /proc, and the
// small helpers they share.
import { readFileSync } from 'node:fs';

/** Resident set size of a process, in bytes (/proc). */
export function rssBytes(pid) {
  const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(kb[1]) * 1024;
}

/** User + system CPU time of a process, in milliseconds. */
export function cpuMs(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // utime, stime in clock ticks (USER_HZ = 100)
}

/** Milliseconds the machine's CPUs spent idle (all of them summed), from /proc/stat. */
export function idleMs() {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/);
  return ((Number(fields[4]) + Number(fields[5])) * 1000) / 100; // idle, iowait
}

/** Kills `child` (SIGKILL) and resolves once it has exited. */
export async function stop(child) {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await gone;
}

export function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Bytes as MiB with one decimal. */
export const mib = (bytes) => (bytes / 2 ** 20).toFixed(1);
