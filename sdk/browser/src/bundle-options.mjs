// esbuild options for any browser bundle that contains the SDK: this package's own bundles and the
// widget's (sdk/widget/src/build.mjs), so both drop the same transports and shims.
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

// The SDK connects with `transports: ['websocket']` only, yet engine.io-client bundles long-polling
// and WebTransport too (about 2 KB gzipped), kept alive by their module-level side effects. Their
// modules are replaced by stubs; their table entries become undefined and are never looked up.
// Should engine.io-client rename these exports, esbuild fails on the missing import, not silently.
const websocketOnly = {
  name: 'engine.io-client-websocket-only',
  setup(b) {
    const dropped = /^\.\/(transports\/)?(polling|polling-xhr|polling-fetch|webtransport)(\.node)?\.js$/;
    b.onResolve({ filter: dropped }, (args) =>
      /[\\/]engine\.io-client[\\/]/.test(args.importer) ? { path: args.path, namespace: 'dropped-transport' } : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'dropped-transport' }, () => ({
      contents: 'export const Polling = undefined, XHR = undefined, Fetch = undefined, WT = undefined;',
      loader: 'js',
    }));
  },
};

// socket.io-client's refusal of a v2 hub is a 190-character sentence with a link; the hub is v4,
// so the SDK never shows it, and a short one keeps about 120 bytes gzipped out of the bundle.
// Should the sentence change upstream, the build fails rather than silently keeping it.
const V2_REFUSAL =
  'It seems you are trying to reach a Socket.IO server in v2.x with a v3.x client, but they are not compatible (more information here: https://socket.io/docs/v3/migrating-from-2-x-to-3-0/)';
const shortV2Refusal = {
  name: 'socket.io-client-short-v2-refusal',
  setup(b) {
    b.onLoad({ filter: /[\\/]socket\.io-client[\\/]build[\\/]esm[\\/]socket\.js$/ }, async (args) => {
      const source = await readFile(args.path, 'utf8');
      if (!source.includes(V2_REFUSAL)) throw new Error(`${args.path}: the v2 refusal sentence changed; update bundle-options.mjs`);
      return { contents: source.replace(V2_REFUSAL, 'a Socket.IO v2 server is not compatible with this v3+ client'), loader: 'js' };
    });
  },
};

/** The options shared by every bundle that contains the SDK. */
export const common = {
  bundle: true,
  minify: true,
  sourcemap: true,
  target: 'es2020',
  platform: 'browser',
  // 'browser' maps engine.io-client's Node transports to the native WebSocket.
  mainFields: ['browser', 'module', 'main'],
  conditions: ['browser'],
  // socket.io-client's ESM build is already free of `debug`; the alias is a guard in case a
  // resolution path ever picks the esm-debug build.
  alias: { debug: join(here, 'debug-shim.mjs') },
  plugins: [websocketOnly, shortV2Refusal],
  legalComments: 'none',
  // Assigning fields in the constructor instead of defining them keeps es2020 output free of a
  // defineProperty helper call per field; no SDK class relies on define semantics.
  tsconfigRaw: { compilerOptions: { useDefineForClassFields: false } },
  logLevel: 'warning',
};
