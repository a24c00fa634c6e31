/**
 * The widget's icons: inline SVG paths drawn with the current text colour (no emoji, which render
 * as empty boxes without an emoji font, and no icon font). 24×24, stroked.
 */
const PATHS = {
  chat: 'M21 12a8 8 0 0 1-11.6 7.1L4 20l1-4.6A8 8 0 1 1 21 12z',
  close: 'M6 6l12 12M18 6L6 18',
  send: 'M12 19V5M5 12l7-7 7 7',
  stop: 'M7 7h10v10H7z',
  copy: 'M9 9h11v11H9zM5 15H4V4h11v1',
  check: 'M5 12l5 5 9-10',
  up: 'M7 11v9H4v-9h3zm0 0l4-8c1.7 0 3 1.3 3 3v3h5.3c1.2 0 2 1.1 1.8 2.2l-1.4 7A2 2 0 0 1 17.7 20H7',
  retry: 'M4 12a8 8 0 1 0 2.3-5.7M4 4v4h4',
  tool: 'M14.7 6.3a4 4 0 0 0-5.4 5.2L3 17.8 6.2 21l6.3-6.3a4 4 0 0 0 5.2-5.4l-2.6 2.6-2.6-.6-.6-2.6z',
  warn: 'M12 3l10 18H2zM12 10v4M12 17v.5',
  file: 'M14 3H6v18h12V7zM14 3v4h4',
  spinner: 'M12 3a9 9 0 1 0 9 9',
  bulb: 'M9 18h6M10 21h4M12 3a6 6 0 0 0-3.5 10.9c.6.5 1 1.2 1 2.1h5c0-.9.4-1.6 1-2.1A6 6 0 0 0 12 3z',
} as const;

/** Icons drawn as another turned half a turn: thumbs down, the arrow down. */
const TURNED = { down: 'up', arrowDown: 'send' } as const;

export type IconName = keyof typeof PATHS | keyof typeof TURNED;

const SVG = 'http://www.w3.org/2000/svg';

/** An SVG icon, hidden from assistive technology (its button carries the accessible name). */
export function icon(name: IconName, className?: string): SVGSVGElement {
  const svg = document.createElementNS(SVG, 'svg');
  svg.setAttribute('viewBox', '0 0 24 24');
  svg.setAttribute('aria-hidden', 'true');
  svg.setAttribute('class', className ? `icon ${className}` : 'icon');
  const path = document.createElementNS(SVG, 'path');
  const turned = name in TURNED;
  path.setAttribute('d', PATHS[turned ? TURNED[name as keyof typeof TURNED] : (name as keyof typeof PATHS)]);
  if (turned) path.setAttribute('transform', 'rotate(180 12 12)');
  svg.appendChild(path);
  return svg;
}
