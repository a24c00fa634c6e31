// Bundles the browser SDK: dist/sdk/embed.mjs (ES module) and dist/sdk/embed.js (script tag,
// global `RelayChat`); the file names are the ones the hub has always served. Run by scripts/build.mjs
// after tsc, and by the @relay-hub/browser package's build (sdk/browser/build.mjs) with
// `--outdir=<its dist>`; prints minified and gzipped sizes.
import { build } from 'esbuild';
import { mkdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..', '..');
const outdirArg = process.argv.slice(2).find((a) => a.startsWith('--outdir='));
const outdir = outdirArg ? resolve(outdirArg.slice('--outdir='.length)) : join(root, 'dist', 'sdk');
const entry = join(here, 'index.ts');

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

const common = {
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

mkdirSync(outdir, { recursive: true });
await build({ ...common, entryPoints: [entry], format: 'esm', outfile: join(outdir, 'embed.mjs') });
// The script-tag build exposes the class itself as `RelayChat`, not a namespace object.
await build({
  ...common,
  stdin: {
    contents: `import { RelayChat, RelayChatError } from './index';\nglobalThis.RelayChat = Object.assign(RelayChat, { RelayChatError });\n`,
    resolveDir: here,
    sourcefile: 'embed-global.ts',
    loader: 'ts',
  },
  format: 'iife',
  outfile: join(outdir, 'embed.js'),
});

// The AI SDK transport (`./ai-sdk` of the package): an ES module that imports RelayChat from the
// embed.mjs beside it, so a page that uses both loads one SDK, not two.
const sharedSdk = {
  name: 'shared-embed-sdk',
  setup(b) {
    b.onResolve({ filter: /^\.\.\/index$/ }, (args) =>
      /[\\/]ai-sdk$/.test(args.resolveDir) ? { path: './embed.mjs', external: true } : undefined,
    );
  },
};
await build({
  ...common,
  plugins: [...common.plugins, sharedSdk],
  entryPoints: [join(here, 'ai-sdk', 'index.ts')],
  format: 'esm',
  outfile: join(outdir, 'ai-sdk.mjs'),
});

for (const name of ['embed.mjs', 'embed.js', 'ai-sdk.mjs']) {
  const file = join(outdir, name);
  const code = readFileSync(file);
  const kb = (n) => `${(n / 1024).toFixed(1)} KB`;
  console.log(`${relative(root, file)}: ${kb(code.length)} min, ${kb(gzipSync(code, { level: 9 }).length)} min+gzip`);
}
