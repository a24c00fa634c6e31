// `npm run docs` (builds first): rewrites the generated tables of docs/ (scripts/docs-tables.mjs)
// between their markers, `<!-- generated:<name>:start -->` … `<!-- generated:<name>:end -->`.
// `node scripts/docs.mjs --check` changes nothing and exits 1 naming every stale table
// (test/unit/docs.test.ts runs it), so a new setting, event or code is one `npm run docs` away.
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { GENERATED } from './docs-tables.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const check = process.argv.includes('--check');
const problems = [];

for (const [page, blocks] of Object.entries(GENERATED)) {
  const file = join(ROOT, page);
  const before = readFileSync(file, 'utf8');
  let text = before;
  for (const [name, [source, render]] of Object.entries(blocks)) {
    const start = `<!-- generated:${name}:start -->`;
    const end = `<!-- generated:${name}:end -->`;
    const from = text.indexOf(start);
    const to = text.indexOf(end);
    if (from < 0 || to < from) {
      problems.push(`${page}: markers ${start} … ${end} missing`);
      continue;
    }
    const body = `\n<!-- written by \`npm run docs\` from ${source}; edit that, not this table -->\n${render()}\n`;
    text = text.slice(0, from + start.length) + body + text.slice(to);
  }
  if (text === before) continue;
  if (check) problems.push(`${page}: generated tables are stale; run \`npm run docs\``);
  else {
    writeFileSync(file, text);
    process.stdout.write(`docs: rewrote the generated tables of ${page}\n`);
  }
}
if (problems.length > 0) {
  process.stderr.write(`${problems.join('\n')}\n`);
  process.exit(1);
}
