import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';

const dist = join(__dirname, '..', '..', '..', 'dist', 'sdk');
/** The widget with the browser SDK and the markdown renderer (docs/widget.md, "Sizes"). */
const BUDGET = 45 * 1024;

function read(name: string): Buffer {
  const file = join(dist, name);
  if (!existsSync(file)) throw new Error(`${file} is missing: run the build first (npm run build)`);
  return readFileSync(file);
}
const gz = (b: Buffer) => gzipSync(b, { level: 9 }).length;

/** Runs after the build, which also refuses a widget over budget (sdk/widget/src/build.mjs). */
describe('widget bundles', () => {
  it.each(['widget.js', 'widget.mjs'])('%s (widget + SDK + markdown) is at most 45 KB min+gzip', (name) => {
    const size = gz(read(name));
    console.log(
      `${name}: ${(size / 1024).toFixed(1)} KB min+gzip; widget-highlight.mjs: ${(gz(read('widget-highlight.mjs')) / 1024).toFixed(1)} KB`,
    );
    expect(size).toBeLessThanOrEqual(BUDGET);
  });

  it('keeps the highlighter out of the widget: it is a chunk of its own, loaded by URL', () => {
    for (const name of ['widget.js', 'widget.mjs']) {
      const code = read(name).toString();
      expect(code).not.toContain('registerLanguage');
      expect(code).toContain('/sdk/widget-highlight.mjs');
    }
    expect(read('widget-highlight.mjs').toString()).toMatch(/registerLanguage/);
  });

  it("holds marked's lexer only: its HTML renderer and parser are left out (sdk/widget/src/build.mjs)", () => {
    for (const name of ['widget.js', 'widget.mjs']) {
      const code = read(name).toString();
      expect(code).toContain('blockquote');
      // Strings of marked's HTML renderer and of its `parse` error page.
      expect(code).not.toContain('<blockquote>');
      expect(code).not.toContain('An error occurred');
    }
  });

  it('sets no HTML from strings: no innerHTML, outerHTML, insertAdjacentHTML or document.write in the widget code', () => {
    const src = [
      'element.ts',
      'conversation.ts',
      'inbound.ts',
      'composer.ts',
      'dom.ts',
      'icons.ts',
      'transcript/markdown.ts',
      'transcript/code-block.ts',
      'transcript/transcript.ts',
      'transcript/message-view.ts',
      'transcript/parts-view.ts',
      'transcript/parts/tool.ts',
      'transcript/parts/media.ts',
      'transcript/parts/reasoning.ts',
      'transcript/time.ts',
      'highlight.chunk.ts',
    ]
      .map((f) => readFileSync(join(__dirname, '..', 'src', f), 'utf8'))
      .join('\n');
    expect(src).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|document\.write|createContextualFragment|DOMParser/);
  });
});
