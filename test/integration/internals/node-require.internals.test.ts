import { spawn } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..', '..');

// src/internals/node-require.internals.ts puts a finished module into Node's CommonJS cache: a later
// require of that path, from any package, must get it. Run in a plain Node process (the built
// code): jest's module registry is not Node's (end to end: test/integration/library-debug.test.ts).
const SCRIPT = `
const { createRequire } = require('node:module');
const { preloadModule, resolveFrom } = require('./dist/internals/node-require.internals');
const found = resolveFrom('socket.io', 'debug');
const stand = { standIn: true };
preloadModule(found.path, stand);
console.log(JSON.stringify({
  own: found.load(found.path) === stand,
  fromSocketIo: createRequire(require.resolve('socket.io'))('debug') === stand,
  missingPackage: resolveFrom('no-such-package-relay-hub', 'debug'),
  missingDependency: resolveFrom('socket.io', 'no-such-dependency-relay-hub'),
}));`;

describe('node require internals', () => {
  it('a preloaded module is what every later require of its path gets; unresolvable names give null', async () => {
    const { code, stdout, stderr } = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
      const child = spawn(process.execPath, ['-e', SCRIPT], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      child.stdout.on('data', (chunk) => (out += chunk));
      child.stderr.on('data', (chunk) => (err += chunk));
      child.once('error', reject);
      child.once('exit', (exit) => resolve({ code: exit, stdout: out, stderr: err }));
    });
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(JSON.parse(stdout)).toEqual({ own: true, fromSocketIo: true, missingPackage: null, missingDependency: null });
  });
});
