// `npm run soak`: bundles the soak harness (test/soak/, TypeScript) for Node with esbuild into
// dist/soak/ (packages stay external, resolved from node_modules; the deploy/*.cjs runners are
// required from where they are, since they locate the repository by their own path), then runs it
// with the arguments given. See docs/soak.md.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
// The hubs and peers run on this Node: the one the hub is built for (package.json engines).
if (Number(process.versions.node.split('.')[0]) !== 24) {
  process.stderr.write(
    `soak: this is Node ${process.version}; the hub runs on Node 24. Run \`npm run soak -- …\` (npm puts node_modules/.bin/node first on PATH) or node_modules/.bin/node scripts/soak.mjs.\n`,
  );
  process.exit(2);
}
const outdir = join(root, 'dist', 'soak');
if (!existsSync(join(root, 'dist', 'main.js'))) {
  process.stderr.write('soak: dist/main.js is missing; run `npm run build` first (`npm run soak` does)\n');
  process.exit(2);
}

const deployInPlace = {
  name: 'deploy-in-place',
  setup(b) {
    b.onResolve({ filter: /\/deploy\/[^/]+\.cjs$/ }, (args) => ({ path: resolve(args.resolveDir, args.path), external: true }));
  },
};

await build({
  entryPoints: {
    main: join(root, 'test/soak/main.ts'),
    runtime: join(root, 'test/soak/runtime.ts'),
    hostile: join(root, 'test/soak/hostile.ts'),
  },
  outdir,
  outExtension: { '.js': '.cjs' },
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node24',
  packages: 'external',
  plugins: [deployInPlace],
  sourcemap: 'inline',
  logLevel: 'warning',
});

const child = spawn(process.execPath, ['--enable-source-maps', join(outdir, 'main.cjs'), ...process.argv.slice(2)], { stdio: 'inherit' });
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 128 : 1)));
