// Builds the @relay-hub/embed package, the former name of @relay-hub/browser kept so existing
// installs keep working: the same bundles and types, built by sdk/browser/build.mjs into this dist.
import { execFileSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
execFileSync(process.execPath, [join(here, '..', 'browser', 'build.mjs'), `--outdir=${join(here, 'dist')}`], { stdio: 'inherit' });
