// `node scripts/parallel.mjs <script>...`: runs the named npm scripts of package.json at once and fails
// when any of them fails. `npm run lint` and `npm test` run their static checks this way: the type
// check, ESLint, Prettier and dependency-cruiser read the same files and do not depend on each other,
// and each is one thread, so on two cores they take about as long as the longest of them instead of
// their sum (docs/testing.md). Each script's output is printed in one piece when it ends, with its time.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const names = process.argv.slice(2);
const { scripts } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const unknown = names.filter((name) => !scripts[name]);
if (names.length === 0 || unknown.length > 0) {
  console.error(`usage: node scripts/parallel.mjs <npm script>...; not in package.json: ${unknown.join(', ') || '(none named)'}`);
  process.exit(2);
}

/** Runs one script through npm (so its binaries resolve as in `npm run`), its output kept until it ends. */
function run(name) {
  const started = performance.now();
  return new Promise((resolve) => {
    const child = spawn('npm', ['run', '--silent', name], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    const output = [];
    child.stdout.on('data', (chunk) => output.push(chunk));
    child.stderr.on('data', (chunk) => output.push(chunk));
    child.on('error', (err) => output.push(Buffer.from(`cannot start npm: ${err.message}\n`)));
    child.on('close', (code, signal) => {
      const seconds = ((performance.now() - started) / 1000).toFixed(1);
      const ok = code === 0;
      process.stdout.write(`${ok ? 'ok' : 'FAILED'}  ${name} (${seconds} s${signal ? `, ${signal}` : ''})\n`);
      const text = Buffer.concat(output).toString('utf8').trimEnd();
      if (text) process.stdout.write(`${text.replace(/^/gm, `  ${name} | `)}\n`);
      resolve(ok);
    });
  });
}

const results = await Promise.all(names.map(run));
process.exit(results.every(Boolean) ? 0 : 1);
