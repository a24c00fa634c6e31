// Build pipeline: generated code first (tsoa routes + spec, typed REST client), then the compiler,
// the AsyncAPI document, then the browser bundles. Every step throws on failure so `npm start` / `npm test` stop early.
import { execFileSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const bin = (name) => join(root, 'node_modules', '.bin', name);
const run = (name, args) => execFileSync(bin(name), args, { cwd: root, stdio: 'inherit' });

rmSync(join(root, 'dist'), { recursive: true, force: true });
if (existsSync(join(root, 'tsoa.json'))) {
  run('tsoa', ['spec-and-routes', '-c', 'tsoa.json']);
}
if (existsSync(join(root, 'openapi-ts.config.mjs'))) {
  run('openapi-ts', ['-f', 'openapi-ts.config.mjs']);
}
run('tsc', ['-p', 'tsconfig.json']);
// The AsyncAPI document comes from the compiled protocol registry, so it follows the compiler.
execFileSync(process.execPath, [join(root, 'scripts/asyncapi.mjs')], { cwd: root, stdio: 'inherit' });
// The Python agent SDK's protocol module comes from that document.
execFileSync(process.execPath, [join(root, 'scripts/python-protocol.mjs')], { cwd: root, stdio: 'inherit' });
if (existsSync(join(root, 'src/sdk/embed/build.mjs'))) {
  run('tsc', ['-p', 'tsconfig.embed.json']);
  execFileSync(process.execPath, [join(root, 'src/sdk/embed/build.mjs')], { cwd: root, stdio: 'inherit' });
}
