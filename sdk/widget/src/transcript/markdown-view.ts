import type { Token } from 'marked';
import { h } from '../dom';
import type { CodeBlockContext } from './code-block';
import { lex, renderBlocks } from './markdown';

/**
 * A markdown text that may grow. Blocks that are complete (followed by another block) are rendered
 * once and never touched again, so a reader's selection in them survives and nothing above the end
 * reflows; only the last, growing block is rendered again, at most once per animation frame.
 */
export class MarkdownView {
  readonly element = h('div', { class: 'md' });
  private text = '';
  /** Length of the text's prefix rendered as settled blocks. */
  private settled = 0;
  private tail: Node[] = [];
  private frame = 0;
  private final = false;

  constructor(private readonly ctx: Omit<CodeBlockContext, 'settled'>) {}

  /** Sets the whole text so far; `final` once it will not grow any more. */
  set(text: string, final: boolean): void {
    text = text.replace(/\r\n?/g, '\n');
    if (text === this.text && final === this.final) return;
    if (!text.startsWith(this.text.slice(0, this.settled))) this.reset();
    this.text = text;
    this.final = final;
    if (final) {
      cancelAnimationFrame(this.frame);
      this.frame = 0;
      this.render();
    } else if (!this.frame) {
      this.frame = requestAnimationFrame(() => {
        this.frame = 0;
        this.render();
      });
    }
  }

  /** The text as shown (for copy). */
  get value(): string {
    return this.text;
  }

  private reset(): void {
    this.element.replaceChildren();
    this.settled = 0;
    this.tail = [];
  }

  private render(): void {
    const rest = this.text.slice(this.settled);
    const tokens = lex(rest);
    // The last block that is not blank space may still grow: everything before it has settled.
    let last = tokens.length;
    if (!this.final) {
      last = tokens.length - 1;
      while (last > 0 && tokens[last].type === 'space') last--;
      if (last < 0) last = 0;
    }
    let done: Token[] = tokens.slice(0, last);
    const raw = done.map((t) => t.raw).join('');
    // Should the lexer ever not echo its input, nothing settles and the whole rest is the tail.
    if (!rest.startsWith(raw)) [done, last] = [[], 0];
    for (const node of this.tail) node.parentNode?.removeChild(node);
    if (done.length > 0) {
      this.element.append(...renderBlocks(done, { ...this.ctx, settled: true }));
      this.settled += raw.length;
    }
    this.tail = renderBlocks(tokens.slice(last), { ...this.ctx, settled: this.final });
    this.element.append(...this.tail);
  }
}
