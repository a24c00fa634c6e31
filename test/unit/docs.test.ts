import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { configSchema } from '../../src/config/config.schema';
import { AckCodes, Events, HandshakeCodes, ProblemCodes, SessionClosedCodes } from '../../src/protocol';

const ROOT = join(__dirname, '..', '..');
const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');

/** The pages README.md promises, each written for its own reader. */
const PAGES = [
  'docs/architecture.md',
  'docs/protocol.md',
  'docs/browser-sdk.md',
  'docs/agent-sdk.md',
  'docs/rest.md',
  'docs/configuration.md',
  'docs/deployment.md',
  'docs/operations.md',
  'docs/benchmarks.md',
  'docs/testing.md',
  'docs/streaming.md',
  'docs/python-sdk.md',
  'docs/monitoring.md',
  'docs/upgrading.md',
  'docs/adr/README.md',
];

/** README.md and every page under docs/. */
function markdownFiles(): string[] {
  const out = ['README.md'];
  const walk = (dir: string) => {
    for (const name of readdirSync(join(ROOT, dir))) {
      const path = `${dir}/${name}`;
      if (statSync(join(ROOT, path)).isDirectory()) walk(path);
      else if (name.endsWith('.md')) out.push(path);
    }
  };
  walk('docs');
  return out;
}

/** GitHub's anchors of a page's headings (`## The AsyncAPI document` → `the-asyncapi-document`). */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  const text = markdown.replace(/```[\s\S]*?```/g, '');
  for (const [, heading] of text.matchAll(/^#{1,6}\s+(.+)$/gm)) {
    const slug = heading
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .trim()
      .replace(/\s/g, '-');
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    out.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return out;
}

/** Every relative link of a page, outside code blocks: [text](target) and <a href="target">. */
function relativeLinks(markdown: string): string[] {
  const text = markdown.replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '');
  const targets = [...text.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]);
  return targets.filter((t) => !/^[a-z][a-z0-9+.-]*:/i.test(t));
}

/** The rows of a page's tables whose first cell is `name` in backticks. */
const rowOf = (page: string, name: string) =>
  new RegExp(`^\\| \`${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\` \\|(.*)$`, 'm').exec(page)?.[1];

describe('the README', () => {
  const readme = read('README.md');

  it('is at most 250 lines', () => {
    expect(readme.split('\n').length).toBeLessThanOrEqual(250);
  });

  it('links every page of docs/, and each exists', () => {
    for (const page of PAGES) {
      expect({ page, exists: existsSync(join(ROOT, page)) }).toEqual({ page, exists: true });
      expect({ page, linked: readme.includes(`](${page})`) }).toEqual({ page, linked: true });
    }
  });

  it('gives the two-command quick start', () => {
    expect(readme).toMatch(/```sh\nnpm install && npm start[^\n]*\nnpm test[^\n]*\n```/);
  });
});

describe('README.md and docs/', () => {
  const files = markdownFiles();

  it('find every page', () => {
    expect(files).toEqual(expect.arrayContaining(['README.md', ...PAGES]));
  });

  it.each(files)('%s: every relative link resolves, anchors included', (file) => {
    const broken: string[] = [];
    for (const link of relativeLinks(read(file))) {
      const [path, anchor] = link.split('#');
      const target = path === '' ? join(ROOT, file) : resolve(dirname(join(ROOT, file)), path);
      if (!existsSync(target)) {
        broken.push(`${link}: no ${relative(ROOT, target)}`);
        continue;
      }
      if (anchor !== undefined && target.endsWith('.md') && !anchors(readFileSync(target, 'utf8')).has(anchor)) {
        broken.push(`${link}: no heading #${anchor} in ${relative(ROOT, target)}`);
      }
    }
    expect(broken).toEqual([]);
  });

  it.each(files)('%s: cites nothing outside the repository (no SPEC sections, no seed)', (file) => {
    // The soak's seeds are its own: the fault schedule's PRNG seed, a command-line option.
    const text = file.endsWith('soak.md') ? read(file).replace(/\b(--)?seeds?\b/g, '') : read(file);
    expect(text).not.toMatch(/\bSPEC\b|§|\bseed\b/);
  });

  it('have tables in step with the code (`npm run docs` rewrites them)', () => {
    // Reads dist/: the build is current before tests run (`npm test` builds first).
    execFileSync(process.execPath, [join(ROOT, 'scripts/docs.mjs'), '--check'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  });
});

describe('docs/configuration.md documents', () => {
  const page = read('docs/configuration.md');
  it.each(Object.keys(configSchema))('setting %s', (key) => {
    expect(rowOf(page, key)).toBeDefined();
  });
});

describe('docs/protocol.md documents', () => {
  const page = read('docs/protocol.md');

  it.each(Object.values(Events))('event %s', (event) => {
    expect(rowOf(page, event)).toBeDefined();
  });

  it.each(Object.entries(HandshakeCodes))('handshake code %s with its retryability', (code, { retryable }) => {
    const handshake = page.slice(page.indexOf('Handshake refusals'), page.indexOf('Error acks'));
    expect(rowOf(handshake, code)).toMatch(new RegExp(`^ ${retryable ? 'yes' : 'no'} \\|`));
  });

  it.each(Object.entries(AckCodes))('ack code %s with its retryability', (code, { retryable }) => {
    const acks = page.slice(page.indexOf('Error acks'), page.indexOf('`session:closed`, sent'));
    expect(rowOf(acks, code)).toMatch(new RegExp(`^ ${retryable ? 'yes' : 'no'} \\|`));
  });

  it.each(Object.entries(SessionClosedCodes))('session:closed code %s with its retryability', (code, { retryable }) => {
    const closed = page.slice(page.indexOf('`session:closed`, sent'));
    expect(rowOf(closed, code)).toMatch(new RegExp(`^ ${retryable ? 'yes' : 'no'} \\|`));
  });
});

describe('docs/rest.md documents', () => {
  const page = read('docs/rest.md');
  it.each(Object.entries(ProblemCodes))('problem code %s with its status', (code, { status }) => {
    expect(rowOf(page, code)).toMatch(new RegExp(`^ ${status} \\|`));
  });
});
