/** Attribute values of {@link h}: `false`, `null` and `undefined` leave the attribute out. */
export type Attrs = Record<string, string | number | boolean | null | undefined>;
export type Child = Node | string | null | undefined | false;

/**
 * Creates an element with attributes and children. Strings become text nodes, never markup: the
 * widget builds every node itself, so nothing a bot or a user wrote is parsed as HTML.
 */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs?: Attrs | null, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  if (attrs)
    for (const [k, v] of Object.entries(attrs))
      if (v !== false && v !== null && v !== undefined) el.setAttribute(k, v === true ? '' : String(v));
  append(el, children);
  return el;
}

/** Appends children to a node; strings as text. */
export function append(parent: Node, children: Child[]): void {
  for (const c of children)
    if (c !== null && c !== undefined && c !== false) parent.appendChild(typeof c === 'string' ? document.createTextNode(c) : c);
}

/** The URL when it is absolute and `http:`, `https:` (or `mailto:` when allowed); else undefined. */
export function safeUrl(href: unknown, mailto = false): string | undefined {
  if (typeof href !== 'string') return undefined;
  let url: URL;
  try {
    url = new URL(href.trim());
  } catch {
    return undefined;
  }
  return url.protocol === 'https:' || url.protocol === 'http:' || (mailto && url.protocol === 'mailto:') ? url.href : undefined;
}

/** A link that opens in a new tab without giving the opened page a handle on this one. */
export function link(href: string, ...children: Child[]): HTMLAnchorElement {
  return h('a', { href, target: '_blank', rel: 'noopener noreferrer' }, ...children);
}
