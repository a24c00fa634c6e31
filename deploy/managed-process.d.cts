// Types for managed-process.cjs, so TypeScript (the soak harness in test/soak/) can drive processes
// the way the cluster runner does.
import type { EventEmitter } from 'node:events';
import type { ExitStatus } from './cluster.cjs';

export class ManagedProcess extends EventEmitter {
  constructor(
    name: string,
    command: string,
    args: string[],
    options?: { env?: Record<string, string | undefined>; cwd?: string; onLog?: (name: string, line: string) => void; stdoutFd?: number },
  );
  readonly name: string;
  command: string;
  /** Read at each start(): a restart may change them. */
  args: string[];
  /** The last 200 output lines. */
  tail: string[];
  readonly pid: number | undefined;
  readonly running: boolean;
  /** Resolves when the current process exits. */
  readonly exited: Promise<ExitStatus>;
  start(): this;
  kill(signal?: NodeJS.Signals): Promise<ExitStatus>;
  /** `signal`, then SIGKILL to the whole group after `timeoutMs`. */
  stop(signal?: NodeJS.Signals, timeoutMs?: number): Promise<ExitStatus>;
  killGroup(signal: NodeJS.Signals): void;
  describeFailure(what: string): string;
}

/** Resolves once `probe()` returns true; rejects when `proc` exits first or `timeoutMs` passes. */
export function waitUntil(proc: ManagedProcess, what: string, probe: () => Promise<boolean>, timeoutMs: number): Promise<void>;
/** Resolves when `proc` prints a line matching `pattern`. */
export function waitForLine(proc: ManagedProcess, pattern: RegExp, what: string, timeoutMs: number): Promise<void>;
/** GET `url`: true on a 2xx within 2 s. */
export function httpOk(url: string): Promise<boolean>;
