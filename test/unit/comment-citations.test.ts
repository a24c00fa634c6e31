import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

// Comments cite the repository's own docs (README.md, docs/…): a reader of this tree has no other
// document. A citation of the product contract (its name in capitals, a section sign), of a style
// guide kept outside the tree or of the code the first release was grown from fails here. The
// guards that spell these patterns are not scanned.
const ROOT = join(__dirname, '..', '..');
const FOLDERS = ['src', 'test', 'bench', 'scripts', 'deploy', 'helm', 'sdk', '.ci'];
/** Files at the top of the tree that carry comments. */
const TOP_FILES = ['docker-compose.yml', 'package.json', 'tsoa.json', 'eslint.config.mjs', 'jest.config.js', 'jest.containers.config.js'];
/** Generated code and files that are not ours to word. */
const SKIP = new Set(['node_modules', 'generated', 'client', 'fixtures', 'dist', 'build', '__pycache__', '.mypy_cache', '.pytest_cache']);
/** Guards that spell the patterns they reject: this file and the docs' own (test/unit/docs.test.ts). */
const GUARDS = new Set([__filename, join(ROOT, 'test', 'unit', 'docs.test.ts')]);
const TEXT = /\.(ts|mts|cts|js|mjs|cjs|sh|conf|compose|py|ya?ml|tpl|toml|md|txt)$|Dockerfile$|^run$/;

const FORBIDDEN: [string, RegExp][] = [
  ['the product contract', new RegExp(`\\b${'SP' + 'EC'}\\b`)],
  ['a section sign', new RegExp('\u00a7')],
  ['the style guide', new RegExp(`${'STY' + 'LE'}(\\.md)?\\b`)],
  ['the seed', /\bseed\s*\u00a7|\b(as|in) the seed\b|\bthe seed's|\bseed (repo|repository|project|app|code)\b/i],
];

function files(dir: string): string[] {
  const found: string[] = [];
  for (const name of readdirSync(dir)) {
    if (SKIP.has(name)) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) found.push(...files(path));
    else if (TEXT.test(name) && !GUARDS.has(path)) found.push(path);
  }
  return found;
}

describe('comment citations', () => {
  const all = [...FOLDERS.flatMap((folder) => files(join(ROOT, folder))), ...TOP_FILES.map((name) => join(ROOT, name))];

  it('scans the folders', () => {
    expect(all.length).toBeGreaterThan(200);
  });

  it.each(FORBIDDEN)('no file cites %s', (_what, pattern) => {
    const hits: string[] = [];
    for (const path of all) {
      readFileSync(path, 'utf8')
        .split('\n')
        .forEach((line, i) => {
          if (pattern.test(line)) hits.push(`${relative(ROOT, path)}:${i + 1}: ${line.trim()}`);
        });
    }
    expect(hits).toEqual([]);
  });
});
