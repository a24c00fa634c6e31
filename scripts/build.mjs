// Build pipeline: generated code first (tsoa routes + spec, typed REST client), then the compiler
// with the AsyncAPI document after it, and beside them the browser bundles (the SDK, the widget, the
// demo's and the console's scripts): those compile their own sources, so the five chains run at once
// (each compiler is one thread; on two cores that takes about half the time one after the other).
// Every step throws on failure so `npm start` / `npm test` stop early.
import { execFile, execFileSync } from 'node:child_process';
import { cpSync, existsSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const bin = (name) => join(root, 'node_modules', '.bin', name);
const run = (name, args) => execFileSync(bin(name), args, { cwd: root, stdio: 'inherit' });

/** Runs a binary of node_modules/.bin (or node with a script) and prints its output once it ends. */
async function step(command, args) {
  const file = command === 'node' ? process.execPath : bin(command);
  try {
    const { stdout, stderr } = await promisify(execFile)(file, args, { cwd: root, maxBuffer: 64 * 1024 * 1024 });
    process.stdout.write(stdout);
    process.stderr.write(stderr);
  } catch (err) {
    process.stdout.write(err.stdout ?? '');
    process.stderr.write(err.stderr ?? '');
    throw new Error(`build step failed: ${command} ${args.join(' ')}`);
  }
}

rmSync(join(root, 'dist'), { recursive: true, force: true });
if (existsSync(join(root, 'tsoa.json'))) {
  run('tsoa', ['spec-and-routes', '-c', 'tsoa.json']);
  // Class-level @Response loses its media type in tsoa 6.6: put problem+json back (the script says why).
  execFileSync(process.execPath, [join(root, 'scripts/openapi-problem-media.mjs'), join(root, 'src/http/generated/openapi.json')], {
    cwd: root,
    stdio: 'inherit',
  });
}
if (existsSync(join(root, 'openapi-ts.config.mjs'))) {
  run('openapi-ts', ['-f', 'openapi-ts.config.mjs']);
}
const chains = [
  (async () => {
    await step('tsc', ['-p', 'tsconfig.json']);
    // The Redis scripts are read from beside the compiled store when it loads (src/store/redis/lua-script.ts).
    cpSync(join(root, 'src/store/redis/lua'), join(root, 'dist/store/redis/lua'), { recursive: true });
    // The AsyncAPI document comes from the compiled protocol registry, so it follows the compiler.
    await step('node', [join(root, 'scripts/asyncapi.mjs')]);
    // The Python agent SDK's protocol module comes from that document.
    await step('node', [join(root, 'scripts/python-protocol.mjs')]);
  })(),
];
if (existsSync(join(root, 'sdk/browser/src/build.mjs'))) {
  chains.push(
    (async () => {
      await step('tsc', ['-p', 'tsconfig.browser.json']);
      await step('node', [join(root, 'sdk/browser/src/build.mjs')]);
    })(),
  );
}
if (existsSync(join(root, 'sdk/widget/src/build.mjs'))) {
  chains.push(
    (async () => {
      await step('tsc', ['-p', 'tsconfig.widget.json', '--noEmit', '--emitDeclarationOnly', 'false']);
      await step('node', [join(root, 'sdk/widget/src/build.mjs')]);
    })(),
  );
}
if (existsSync(join(root, 'src/demo/client/demo.client.ts'))) {
  chains.push(
    (async () => {
      await step('tsc', ['-p', 'tsconfig.demo.json']);
      await buildDemoClient();
    })(),
  );
}
if (existsSync(join(root, 'src/console/client/console.client.ts'))) {
  chains.push(
    (async () => {
      await step('tsc', ['-p', 'tsconfig.console.json']);
      await buildConsoleClient();
    })(),
  );
}
// Every chain runs to its end; the first failure (if any) fails the build.
const failed = (await Promise.allSettled(chains)).filter((r) => r.status === 'rejected');
if (failed.length > 0) {
  for (const { reason } of failed) console.error(reason instanceof Error ? reason.message : reason);
  process.exit(1);
}

/**
 * The operator console's script (docs/handoff.md): dist/console/client/console.js, with
 * socket.io-client bundled in (the console talks to /ws/operator, which the browser SDK does not).
 */
async function buildConsoleClient() {
  const { build } = await import('esbuild');
  const { metafile } = await build({
    entryPoints: [join(root, 'src/console/client/console.client.ts')],
    outfile: join(root, 'dist/console/client/console.js'),
    bundle: true,
    format: 'esm',
    minify: true,
    sourcemap: true,
    target: 'es2020',
    platform: 'browser',
    metafile: true,
    legalComments: 'none',
    tsconfigRaw: { compilerOptions: { useDefineForClassFields: false } },
    logLevel: 'warning',
  });
  const size = metafile.outputs['dist/console/client/console.js'].bytes;
  console.log(`dist/console/client/console.js: ${(size / 1024).toFixed(1)} KB min`);
}

/**
 * The demo page's script: dist/demo/client/demo.js (ES module) and its source map, apart from the
 * compiled server files in dist/demo since the hub serves that directory. It loads the widget from
 * the file the hub serves (`/sdk/widget.mjs`, one directory up from `/demo/demo.js`) instead of a
 * second copy of it, so the page runs what integrators get.
 */
async function buildDemoClient() {
  const { build } = await import('esbuild');
  const servedWidget = {
    name: 'served-widget',
    setup(b) {
      b.onResolve({ filter: /^(\.\.\/)+sdk\/widget\/src(\/index)?$/ }, () => ({ path: '../sdk/widget.mjs', external: true }));
    },
  };
  const { metafile } = await build({
    entryPoints: [join(root, 'src/demo/client/demo.client.ts')],
    outfile: join(root, 'dist/demo/client/demo.js'),
    bundle: true,
    format: 'esm',
    minify: true,
    sourcemap: true,
    target: 'es2020',
    platform: 'browser',
    plugins: [servedWidget],
    metafile: true,
    legalComments: 'none',
    // As in the SDK's build: es2020 output without a defineProperty helper call per class field.
    tsconfigRaw: { compilerOptions: { useDefineForClassFields: false } },
    logLevel: 'warning',
  });
  // An import of one widget file by its own path would bundle a second widget; only the index is external.
  const bundled = Object.keys(metafile.inputs).filter((input) => !input.startsWith('src/demo/client/'));
  if (bundled.length > 0)
    throw new Error(`the demo script must import the widget as '../../../sdk/widget/src' only; it bundled ${bundled.join(', ')}`);
  const size = metafile.outputs['dist/demo/client/demo.js'].bytes;
  console.log(`dist/demo/client/demo.js: ${(size / 1024).toFixed(1)} KB min`);
}
