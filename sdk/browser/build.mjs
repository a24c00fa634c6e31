// Builds the @relay-hub/browser package (run by `npm run build` and `prepack` here, so `npm pack` in a
// fresh clone makes a working tarball): the two bundles of sdk/browser/src (socket.io-client inside,
// websocket transport only) and their types, from the repository's esbuild and TypeScript.
// `--outdir=<dir>` builds into another package's dist (the @relay-hub/embed alias, sdk/embed).
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const outdirArg = process.argv.slice(2).find((a) => a.startsWith('--outdir='));
const dist = outdirArg ? resolve(outdirArg.slice('--outdir='.length)) : join(here, 'dist');
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
rmSync(dist, { recursive: true, force: true });
execFileSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.browser.json'), '--outDir', join(dist, 'types')], {
  cwd: root,
  stdio: 'inherit',
});
execFileSync(process.execPath, [join(here, 'src/build.mjs'), `--outdir=${dist}`], { cwd: root, stdio: 'inherit' });
