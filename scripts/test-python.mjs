// `npm run test:python`: the Python agent SDK's checks, `mypy --strict` on the package and then its
// pytest suite against a real hub (dist/ must be built: `npm test` builds first). Extra arguments go
// to pytest (`npm run test:python -- -k stream`). Runs Debian's /usr/bin/python3, where apt installs
// the packages the tests need; PYTHON overrides it.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const python = process.env.PYTHON ?? '/usr/bin/python3';
const APT = 'python3-socketio python3-aiohttp python3-pytest python3-pytest-asyncio python3-mypy python3-hatchling python3-venv';

/** What pytest's exit codes mean (https://docs.pytest.org/en/stable/reference/exit-codes.html). */
const PYTEST_EXIT = {
  1: 'some tests failed',
  2: 'the run was interrupted',
  3: 'pytest hit an internal error',
  4: 'pytest was called wrongly',
  5: 'no tests were collected',
};

// Python's own caches (mypy's, pytest's, bytecode) stay out of the repository's tree: mypy's holds
// copies of the standard library's stubs, which are not this project's files.
const MYPY_CACHE = join(tmpdir(), 'relay-hub-mypy-cache');
const env = { ...process.env, PYTHONDONTWRITEBYTECODE: '1' };

function run(args) {
  const result = spawnSync(python, args, { cwd: root, stdio: 'inherit', env });
  if (result.error) {
    console.error(`test:python: cannot run ${python}: ${result.error.message}`);
    process.exit(1);
  }
  // Killed by a signal: no status, and never a success.
  return result.status ?? 1;
}

const probe = spawnSync(python, ['-c', 'import socketio, aiohttp, pytest, pytest_asyncio, mypy, hatchling, venv'], { cwd: root });
if (probe.error || probe.status !== 0) {
  console.error(`test:python: ${python} lacks the packages the tests need; install them with apt-get install ${APT}`);
  process.exit(1);
}
if (!existsSync(join(root, 'dist', 'main.js'))) {
  console.error('test:python: dist/ is missing; run `npm run build` first');
  process.exit(1);
}

const typecheck = run(['-m', 'mypy', '--strict', '--cache-dir', MYPY_CACHE, 'sdk/python/relay_hub_agent']);
if (typecheck !== 0) {
  console.error('test:python: mypy --strict found errors in sdk/python/relay_hub_agent');
  process.exit(typecheck);
}
const status = run(['-m', 'pytest', '-p', 'no:cacheprovider', 'sdk/python/tests', ...process.argv.slice(2)]);
if (status !== 0) console.error(`test:python: pytest exited with ${status}: ${PYTEST_EXIT[status] ?? 'unknown failure'}`);
// Exit 5 (nothing collected) fails as well: a suite that ran nothing proved nothing.
process.exit(status);
