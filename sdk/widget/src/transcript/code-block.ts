import { h } from '../dom';
import { icon } from '../icons';
import type { Strings } from '../strings';

/** What a code block needs from its transcript: strings, and the on-demand highlighter. */
export interface CodeBlockContext {
  strings: Strings;
  /** Loads the highlighter chunk on first use; undefined when highlighting is off. */
  highlighter?: () => Promise<Highlighter>;
  /** Whether blocks rendered now are final (highlighted) or still growing (plain until they settle). */
  settled: boolean;
}

/** The highlighter chunk's interface (sdk/widget/src/highlight.chunk.ts). */
export interface Highlighter {
  /** Highlighted nodes for `code`, or undefined for a language it does not know. */
  highlight(code: string, lang: string | undefined): DocumentFragment | undefined;
}

/**
 * A code block: a header with the language and a copy button, the code in `<pre>`. Highlighted
 * once it has settled (a growing block stays plain, so it is not re-highlighted on every delta).
 */
export function codeBlock(code: string, lang: string | undefined, ctx: CodeBlockContext): HTMLElement {
  const language = (lang ?? '').split(/\s/)[0].slice(0, 32);
  const codeEl = h('code', null, code);
  const copy = h(
    'button',
    { type: 'button', class: 'icon-btn', 'aria-label': ctx.strings.copyCode, title: ctx.strings.copyCode },
    icon('copy'),
  );
  copy.addEventListener('click', () => void copyText(code, copy, ctx.strings.copied));
  const el = h(
    'figure',
    { class: 'code', part: 'code' },
    h('figcaption', null, h('span', null, language || ctx.strings.code), copy),
    h('pre', { tabindex: 0 }, codeEl),
  );
  if (ctx.settled && ctx.highlighter && code.length < 100_000) {
    void ctx
      .highlighter()
      .then((hl) => {
        const nodes = hl.highlight(code, language || undefined);
        if (nodes) codeEl.replaceChildren(nodes);
      })
      .catch(() => {}); // plain code is a fine fallback
  }
  return el;
}

/** Copies text and says so on the button for a moment. */
export async function copyText(text: string, button: HTMLElement, done: string): Promise<void> {
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    return;
  }
  const label = button.getAttribute('aria-label');
  button.setAttribute('aria-label', done);
  button.replaceChildren(icon('check'));
  setTimeout(() => {
    if (label) button.setAttribute('aria-label', label);
    button.replaceChildren(icon('copy'));
  }, 1500);
}
