// Bundles the browser SDK: dist/sdk/embed.mjs (ES module) and dist/sdk/embed.js (script tag,
// global `RelayChat`); the file names are the ones the hub has always served. Run by scripts/build.mjs
// after tsc, and by the @relay-hub/browser package's build (sdk/browser/build.mjs) with
// `--outdir=<its dist>`; prints minified and gzipped sizes.
import { build } from 'esbuild';
import { common } from './bundle-options.mjs';
import { mkdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..', '..');
const outdirArg = process.argv.slice(2).find((a) => a.startsWith('--outdir='));
const outdir = outdirArg ? resolve(outdirArg.slice('--outdir='.length)) : join(root, 'dist', 'sdk');
const entry = join(here, 'index.ts');

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
