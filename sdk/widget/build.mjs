// Builds the @relay-hub/widget package (run by `npm run build` and `prepack` here): the widget's
// bundles (sdk/widget/src/build.mjs) and its types, from the repository's esbuild and TypeScript.
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const dist = join(here, 'dist');
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
rmSync(dist, { recursive: true, force: true });
execFileSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.widget.json'), '--outDir', join(dist, 'types')], {
  cwd: root,
  stdio: 'inherit',
});
execFileSync(process.execPath, [join(here, 'src/build.mjs'), `--outdir=${dist}`], { cwd: root, stdio: 'inherit' });
