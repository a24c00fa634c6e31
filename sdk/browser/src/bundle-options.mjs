// esbuild options for any browser bundle that contains the SDK: this package's own bundles and the
// widget's (sdk/widget/src/build.mjs), so both drop the same transports and shims.
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
  plugins: [websocketOnly],
  legalComments: 'none',
  // Assigning fields in the constructor instead of defining them keeps es2020 output free of a
  // defineProperty helper call per field; no SDK class relies on define semantics.
  tsconfigRaw: { compilerOptions: { useDefineForClassFields: false } },
  logLevel: 'warning',
};
