import { Lexer, type Token, type Tokens } from 'marked';
import { append, h, link, safeUrl, type Child } from '../dom';
import { codeBlock, type CodeBlockContext } from './code-block';

/**
 * Markdown (CommonMark + GFM tables, task lists, strikethrough, autolinks) to DOM nodes. `marked`
 * lexes; this module builds the nodes from the tokens itself, so no HTML string is ever parsed:
 * raw HTML in a message shows as text, only the elements below can appear, links keep `http:`,
 * `https:` and `mailto:` URLs only and open with `rel="noopener noreferrer"`, and images show as
 * links (nothing is fetched from a site the bot names). docs/adr/0011-widget-markdown-and-highlighting.md says why
 * this replaces an HTML sanitizer.
 */
export function lex(text: string): Token[] {
  return new Lexer({ gfm: true }).lex(text);
}

/** Renders block tokens into nodes. */
export function renderBlocks(tokens: Token[], ctx: CodeBlockContext): Node[] {
  const out: Node[] = [];
  for (const t of tokens) {
    const node = block(t, ctx);
    if (node) out.push(node);
  }
  return out;
}

function block(t: Token, ctx: CodeBlockContext): Node | undefined {
  switch (t.type) {
    case 'space':
    case 'def':
      return undefined;
    case 'heading':
      return h(`h${Math.min(6, (t as Tokens.Heading).depth + 2)}` as 'h3', null, ...inline(t.tokens));
    case 'paragraph':
      return h('p', null, ...inline(t.tokens));
    case 'text':
      return h('p', null, ...(t.tokens ? inline(t.tokens) : [decode(t.text as string)]));
    case 'code':
      return codeBlock((t as Tokens.Code).text, (t as Tokens.Code).lang, ctx);
    case 'blockquote':
      return h('blockquote', null, ...renderBlocks((t as Tokens.Blockquote).tokens, ctx));
    case 'hr':
      return h('hr');
    case 'list':
      return list(t as Tokens.List, ctx);
    case 'table':
      return table(t as Tokens.Table);
    default:
      // Raw HTML and anything unknown: its source, as text.
      return h('p', null, (t as { raw: string }).raw);
  }
}

function list(t: Tokens.List, ctx: CodeBlockContext): HTMLElement {
  const start = t.ordered && t.start !== '' && t.start !== 1 ? String(t.start) : undefined;
  const el = h(t.ordered ? 'ol' : 'ul', { start, class: t.items.some((i) => i.task) ? 'tasks' : undefined });
  for (const item of t.items) {
    const li = h('li');
    for (const tok of item.tokens) {
      if (tok.type === 'checkbox') {
        li.appendChild(
          h('input', {
            type: 'checkbox',
            disabled: true,
            checked: (tok as Tokens.Checkbox).checked,
            'aria-label': (tok as Tokens.Checkbox).checked ? 'done' : 'to do',
          }),
        );
      } else if (tok.type === 'text' && !item.loose) {
        append(li, inline(tok.tokens ?? [tok]));
      } else {
        const node = block(tok, ctx);
        if (node) li.appendChild(node);
      }
    }
    el.appendChild(li);
  }
  return el;
}

function table(t: Tokens.Table): HTMLElement {
  const cell = (tag: 'th' | 'td', c: Tokens.TableCell) =>
    h(tag, { style: c.align ? `text-align:${c.align}` : undefined }, ...inline(c.tokens));
  // A wide table scrolls sideways inside its own box; focusable so the keyboard can scroll it.
  return h(
    'div',
    { class: 'table', tabindex: 0, role: 'region', 'aria-label': 'table' },
    h(
      'table',
      null,
      h('thead', null, h('tr', null, ...t.header.map((c) => cell('th', c)))),
      h('tbody', null, ...t.rows.map((r) => h('tr', null, ...r.map((c) => cell('td', c))))),
    ),
  );
}

function inline(tokens: Token[] | undefined): Child[] {
  const out: Child[] = [];
  for (const t of tokens ?? []) {
    switch (t.type) {
      case 'text':
        out.push(...(t.tokens ? inline(t.tokens) : [decode(t.text as string)]));
        break;
      case 'escape':
        out.push(t.text as string);
        break;
      case 'strong':
        out.push(h('strong', null, ...inline(t.tokens)));
        break;
      case 'em':
        out.push(h('em', null, ...inline(t.tokens)));
        break;
      case 'del':
        out.push(h('del', null, ...inline(t.tokens)));
        break;
      case 'codespan':
        out.push(h('code', null, decode(t.text as string)));
        break;
      case 'br':
        out.push(h('br'));
        break;
      case 'link': {
        const href = safeUrl((t as Tokens.Link).href, true);
        const children = inline(t.tokens);
        out.push(href ? link(href, ...children) : h('span', null, ...children));
        break;
      }
      case 'image': {
        const img = t as Tokens.Image;
        const href = safeUrl(img.href);
        out.push(href ? link(href, img.text || href) : img.text);
        break;
      }
      default:
        out.push((t as { raw: string }).raw);
    }
  }
  return out;
}

const NAMED: Record<string, string> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: '\u00a0',
  copy: '©',
  mdash: '—',
  ndash: '–',
  hellip: '…',
};

/** Decodes the character references markdown text may hold (the lexer leaves them as written). */
export function decode(text: string): string {
  if (!text.includes('&')) return text;
  return text.replace(/&(#x[0-9a-f]{1,6}|#\d{1,7}|[a-z]{2,8});/gi, (m, ref: string) => {
    if (ref[0] !== '#') return NAMED[ref.toLowerCase()] ?? m;
    const code = ref[1] === 'x' || ref[1] === 'X' ? parseInt(ref.slice(2), 16) : parseInt(ref.slice(1), 10);
    return code > 0 && code <= 0x10ffff && (code < 0xd800 || code > 0xdfff) ? String.fromCodePoint(code) : '\ufffd';
  });
}
