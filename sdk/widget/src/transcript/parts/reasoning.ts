import { h } from '../../dom';
import { icon } from '../../icons';
import { fill, type Strings } from '../../strings';

/**
 * A reasoning part: a collapsed row "Thought for N s" that expands to the muted text. N is measured
 * while the answer streams (from the part's arrival to the next part's); without it, "Thought".
 */
export function reasoningPart(text: string, seconds: number | undefined, thinking: boolean, strings: Strings): HTMLElement {
  const label = thinking
    ? strings.thinking
    : seconds !== undefined
      ? fill(strings.thoughtFor, { n: Math.max(1, Math.round(seconds)) })
      : strings.thought;
  return h(
    'details',
    { class: 'step reasoning' },
    h('summary', null, icon('bulb'), h('span', null, label)),
    h('div', { class: 'muted pre' }, text),
  );
}
