// Prometheus's promtool, from Debian's `prometheus` package (.ci/run installs it): `check rules` and
// `test rules` on the alert rules exactly as the chart renders them.
import { execFile } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { stringify } from 'yaml';
import type { HelmResult } from '../../helpers/helm';

function promtoolPath(): string {
  for (const dir of (process.env.PATH ?? '').split(delimiter).concat('/usr/bin')) {
    try {
      accessSync(join(dir, 'promtool'), constants.X_OK);
      return join(dir, 'promtool');
    } catch {
      // not here
    }
  }
  throw new Error("promtool not found: install Debian's prometheus package (apt-get install prometheus)");
}

/** Runs promtool with `args` in `cwd`; resolves with its exit code and output. */
export function promtool(args: string[], cwd?: string): Promise<HelmResult> {
  return new Promise((resolve, reject) => {
    execFile(promtoolPath(), args, { cwd, timeout: 60_000, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err && typeof err.code !== 'number') return reject(new Error(`promtool ${args.join(' ')}: ${err.message}`));
      resolve({ code: err ? (err.code as number) : 0, stdout, stderr });
    });
  });
}

let scratch: string | undefined;
let count = 0;

/** Writes `content` (YAML for objects) to a file in a folder removed when the process exits. */
export function scratchFile(name: string, content: unknown): string {
  if (!scratch) {
    const dir = mkdtempSync(join(tmpdir(), 'relay-hub-promtool-'));
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
    scratch = dir;
  }
  const file = join(scratch, `${count++}-${name}`);
  writeFileSync(file, typeof content === 'string' ? content : stringify(content, { lineWidth: 0 }));
  return file;
}
