// Bundles the chat widget into dist/sdk (or `--outdir=<dir>`): widget.js (one script tag, registers
// <relay-chat> and mounts one from its data-* attributes), widget.mjs (ES module, registers the
// element) and widget-highlight.mjs (the highlighter, loaded only when a code block appears). The
// browser SDK and marked are inside the widget's bundles. Prints the sizes and fails when the widget
// is over its budget (docs/widget.md, "Sizes").
import { build } from 'esbuild';
import { mkdirSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { common } from '../../browser/src/bundle-options.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..', '..');
const outdirArg = process.argv.slice(2).find((a) => a.startsWith('--outdir='));
const outdir = outdirArg ? resolve(outdirArg.slice('--outdir='.length)) : join(root, 'dist', 'sdk');
/** The widget with the SDK and the markdown renderer, min+gzip. */
export const WIDGET_BUDGET = 45 * 1024;

// The widget imports only marked's `Lexer` (it builds DOM nodes from the tokens itself), but marked
// ships one module whose last statements make a `Marked` instance and hang the parser, the HTML
// renderer and the rest on it, so nothing tree-shakes. Those statements go: the lexer stays, and
// marked's HTML renderer and parser (about 3.3 KB gzipped) leave the bundle. Should marked's module
// change shape, the build fails here rather than silently keeping them (docs/adr/0011).
const lexerOnly = {
  name: 'marked-lexer-only',
  setup(b) {
    b.onLoad({ filter: /[\\/]marked[\\/]lib[\\/]marked\.esm\.js$/ }, async (args) => {
      const source = await readFile(args.path, 'utf8');
      const exported = source.match(/export\{([^}]*)\};?\s*(\/\/[^\n]*\s*)?$/)?.[1] ?? '';
      // The local name of each export: { Lexer: 'w', Marked: 'ne', … }.
      const names = Object.fromEntries([...exported.matchAll(/([\w$]+) as ([\w$]+)/g)].map(([, local, name]) => [name, local]));
      // `var v=new Marked;` (minified names), the first statement after the library's classes.
      const marked = names.Marked?.replace(/\$/g, '\\$');
      const start = marked ? source.search(new RegExp(`var [\\w$]+=new ${marked}(\\(\\))?;`)) : -1;
      if (!names.Lexer || start < 0) throw new Error(`${args.path}: marked's module changed shape; update lexerOnly in build.mjs`);
      return { contents: `${source.slice(0, start)}export{${names.Lexer} as Lexer};`, loader: 'js' };
    });
  },
};
const widget = { ...common, plugins: [...common.plugins, lexerOnly] };

mkdirSync(outdir, { recursive: true });
await build({ ...widget, entryPoints: [join(here, 'auto.ts')], format: 'esm', outfile: join(outdir, 'widget.mjs') });
await build({ ...widget, entryPoints: [join(here, 'script-tag.ts')], format: 'iife', outfile: join(outdir, 'widget.js') });
await build({ ...common, entryPoints: [join(here, 'highlight.chunk.ts')], format: 'esm', outfile: join(outdir, 'widget-highlight.mjs') });

const kb = (n) => `${(n / 1024).toFixed(1)} KB`;
for (const name of ['widget.js', 'widget.mjs', 'widget-highlight.mjs']) {
  const file = join(outdir, name);
  const code = readFileSync(file);
  const gz = gzipSync(code, { level: 9 }).length;
  const budget = name.startsWith('widget-') ? '' : ` (budget ${kb(WIDGET_BUDGET)})`;
  console.log(`${relative(root, file)}: ${kb(code.length)} min, ${kb(gz)} min+gzip${budget}`);
  if (budget && gz > WIDGET_BUDGET) throw new Error(`${name} is ${kb(gz)} min+gzip, over the widget's ${kb(WIDGET_BUDGET)} budget`);
}
