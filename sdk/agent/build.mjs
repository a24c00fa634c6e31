// Builds the @relay-hub/agent package (run by `npm run build` and `prepack` here, so `npm pack` in a
// fresh clone makes a working tarball): the agent SDK's sources in src/sdk/agent and the parts of
// src/protocol they import, compiled by the repository's TypeScript into dist/ (CommonJS + types).
// The layer rules (.dependency-cruiser.cjs) keep those sources to socket.io-client and the protocol.
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
rmSync(join(here, 'dist'), { recursive: true, force: true });
execFileSync(process.execPath, [tsc, '-p', join(here, 'tsconfig.json')], { cwd: here, stdio: 'inherit' });
