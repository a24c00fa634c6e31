import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Lowest versions allowed anywhere in the installed tree, each above a published advisory that
 * reaches the hub through the realtime path (engine.io/ws frame handling, socket.io-parser
 * decoding, JWT verification). A transitive copy below the floor fails as much as a direct one.
 */
const FLOORS: Record<string, string> = {
  'socket.io': '4.8.3',
  'engine.io': '6.6.9',
  'socket.io-parser': '4.2.6',
  ws: '8.21.0',
  jsonwebtoken: '9.0.3',
};

interface LockPackage {
  version?: string;
  dev?: boolean;
  link?: boolean;
}

const lock = JSON.parse(readFileSync(join(__dirname, '..', '..', 'package-lock.json'), 'utf8')) as {
  lockfileVersion: number;
  packages: Record<string, LockPackage>;
};

/** Every installed copy of `name`: the lockfile path (`node_modules/a/node_modules/name`) and its entry. */
function copiesOf(name: string): [string, LockPackage][] {
  return Object.entries(lock.packages).filter(([path]) => path === `node_modules/${name}` || path.endsWith(`/node_modules/${name}`));
}

function compare(a: string, b: string): number {
  const parse = (v: string) => {
    const match = /^(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?/.exec(v);
    if (!match) throw new Error(`not a semver version: ${v}`);
    return { core: [Number(match[1]), Number(match[2]), Number(match[3])], pre: match[4] };
  };
  const x = parse(a);
  const y = parse(b);
  for (let i = 0; i < 3; i++) if (x.core[i] !== y.core[i]) return x.core[i] - y.core[i];
  if (x.pre === y.pre) return 0;
  // A prerelease sorts before its release (4.8.3-rc.1 < 4.8.3).
  return x.pre === undefined ? 1 : y.pre === undefined ? -1 : x.pre < y.pre ? -1 : 1;
}

describe('dependency floors (package-lock.json)', () => {
  it('is a lockfile v2/v3 with a packages map', () => {
    expect(lock.lockfileVersion).toBeGreaterThanOrEqual(2);
    expect(Object.keys(lock.packages).length).toBeGreaterThan(0);
  });

  it.each(Object.entries(FLOORS))('every installed %s is at least %s', (name, floor) => {
    const copies = copiesOf(name);
    expect(copies.length).toBeGreaterThan(0);
    const below = copies
      .filter(([, entry]) => !entry.link && compare(entry.version ?? '0.0.0', floor) < 0)
      .map(([path, e]) => `${path}@${e.version}`);
    expect(below).toEqual([]);
  });

  it('has the runtime copies in production dependencies, not only in dev tooling', () => {
    for (const name of Object.keys(FLOORS)) {
      expect({ name, production: copiesOf(name).some(([, entry]) => !entry.dev) }).toEqual({ name, production: true });
    }
  });

  it('compares versions numerically, prereleases below their release', () => {
    expect(compare('4.10.0', '4.8.3')).toBeGreaterThan(0);
    expect(compare('6.6.9', '6.6.10')).toBeLessThan(0);
    expect(compare('8.21.0', '8.21.0')).toBe(0);
    expect(compare('4.8.3-rc.1', '4.8.3')).toBeLessThan(0);
  });
});
