import { h, link, safeUrl } from '../../dom';
import { icon } from '../../icons';
import type { Strings } from '../../strings';
import type { Part } from './types';

/** A file part: an image as a rounded preview that opens full size, any other file as a card. */
export function filePart(part: Extract<Part, { type: 'file' }>): HTMLElement | undefined {
  const url = safeUrl(part.url);
  if (!url) return undefined;
  const name = typeof part.filename === 'string' && part.filename ? part.filename : (new URL(url).pathname.split('/').pop() ?? url);
  if (typeof part.mediaType === 'string' && /^image\/(png|jpe?g|gif|webp|avif)$/i.test(part.mediaType)) {
    const a = link(url, h('img', { class: 'preview', src: url, alt: name, loading: 'lazy', referrerpolicy: 'no-referrer' }));
    a.className = 'image';
    return a;
  }
  const a = link(
    url,
    icon('file'),
    h('span', { class: 'name' }, name),
    typeof part.size === 'number' ? h('span', { class: 'muted' }, bytes(part.size)) : null,
  );
  a.className = 'file';
  return a;
}

function bytes(n: number): string {
  return n < 1024 ? `${n} B` : n < 1048576 ? `${(n / 1024).toFixed(1)} KB` : `${(n / 1048576).toFixed(1)} MB`;
}

/** The sources of an answer: numbered chips (title and domain) matching `[n]` markers in its text. */
export function sourceList(parts: Extract<Part, { type: 'source' }>[], strings: Strings): HTMLElement | undefined {
  if (parts.length === 0) return undefined;
  return h(
    'ol',
    { class: 'sources', 'aria-label': strings.sources },
    ...parts.map((p, i) => {
      const url = safeUrl(p.url);
      const domain = url ? new URL(url).hostname.replace(/^www\./, '') : '';
      const title = String(p.title ?? p.filename ?? domain ?? p.sourceId);
      const body = [
        h('span', { class: 'num' }, String(i + 1)),
        h('span', { class: 'name' }, title),
        domain && title !== domain ? h('span', { class: 'muted' }, domain) : null,
      ];
      return h('li', null, url ? link(url, ...body) : h('span', null, ...body));
    }),
  );
}
