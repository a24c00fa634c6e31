import Module, { createRequire } from 'node:module';

/**
 * To give libraries another module than the one they would load, the hub puts a finished module
 * into Node's CommonJS cache (`require.cache`) under the resolved path before they load it: a
 * documented cache, but `new Module(path)` and filling in `loaded`/`exports` by hand are not a
 * documented way to fill it. This module is the only place that does so, checked by
 * test/integration/internals/node-require.internals.test.ts (and end to end by
 * test/integration/library-debug.test.ts). The modules replaced so far are `debug`'s.
 */
export const NODE_REQUIRE_CHECKED = { package: 'node', versions: ['24.21.0'], debug: ['4.3.7', '4.4.3'] } as const;

/**
 * The file `name` would load for `dependency`, with a `require` that loads it from there, or null
 * when `name` is not installed or cannot resolve `dependency`.
 */
export function resolveFrom(name: string, dependency: string): { path: string; load: NodeJS.Require } | null {
  try {
    const load = createRequire(require.resolve(name));
    return { path: load.resolve(dependency), load };
  } catch {
    return null;
  }
}

/** Makes every later `require` of the file at `path` (an absolute, resolved path) return `exports`. */
export function preloadModule(path: string, exports: unknown): void {
  const module = new Module(path);
  module.filename = path;
  module.loaded = true;
  module.exports = exports;
  require.cache[path] = module;
}
