import { h } from '../dom';
import type { Strings } from '../strings';
import type { CodeBlockContext } from './code-block';
import { MarkdownView } from './markdown-view';
import { filePart, sourceList } from './parts/media';
import { reasoningPart } from './parts/reasoning';
import { toolPart, type Decide } from './parts/tool';
import type { DataRenderer, Part } from './parts/types';

interface Slot {
  type: string;
  key: string;
  node: HTMLElement;
  view?: MarkdownView;
  since: number;
}

export interface PartsContext extends Omit<CodeBlockContext, 'settled'> {
  strings: Strings;
  renderers: Map<string, DataRenderer>;
  decide?: Decide;
}

/**
 * The body of a bot message: its parts in order (a plain message is one `text` part), one component
 * per part type. Text parts grow incrementally ({@link MarkdownView}); any other part is rebuilt
 * only when its content changed. Sources collect under the answer; suggestions are handed to the
 * transcript's owner (they sit above the composer).
 */
export class PartsView {
  readonly element = h('div', { class: 'parts' });
  private readonly slots: Slot[] = [];
  private sources: HTMLElement | undefined;
  private sourcesKey = '';
  suggestions: Extract<Part, { type: 'suggestions' }>['items'] = [];

  constructor(private readonly ctx: PartsContext) {}

  /** Shows `parts`; `final` once the message will not change any more (until a later update). */
  set(parts: Part[], final: boolean): void {
    const now = performance.now();
    parts.forEach((part, i) => {
      if (!part || typeof part !== 'object' || part.type === 'source' || part.type === 'suggestions') return;
      let slot: Slot | undefined = this.slots[i];
      if (slot && slot.type !== part.type) {
        slot.node.remove();
        slot = undefined;
      }
      const growing = !final && i === parts.length - 1;
      if (part.type === 'text') {
        if (!slot) slot = this.add(i, { type: 'text', key: '', node: h('div'), view: new MarkdownView(this.ctx), since: now });
        slot.view!.set(typeof part.text === 'string' ? part.text : '', !growing);
        return;
      }
      const key = JSON.stringify(part) + (growing ? '+' : '');
      if (slot && slot.key === key) return;
      const open = slot?.node.querySelector('details')?.open ?? false;
      const node = this.build(part, slot?.since ?? now, growing, open, now);
      if (!slot) slot = this.add(i, { type: part.type, key, node: node ?? h('div', { hidden: true }), since: now });
      else {
        const fresh = node ?? h('div', { hidden: true });
        slot.node.replaceWith(fresh);
        slot.node = fresh;
        slot.key = key;
      }
    });
    const sources = parts.filter((p): p is Extract<Part, { type: 'source' }> => p?.type === 'source');
    const sourcesKey = JSON.stringify(sources);
    if (sourcesKey !== this.sourcesKey) {
      this.sourcesKey = sourcesKey;
      const list = sourceList(sources, this.ctx.strings);
      this.sources?.remove();
      this.sources = list;
      if (list) this.element.append(list);
    }
    const s = parts.filter((p): p is Extract<Part, { type: 'suggestions' }> => p?.type === 'suggestions').pop();
    this.suggestions = Array.isArray(s?.items) ? s.items.filter((i) => typeof i?.text === 'string').slice(0, 10) : [];
  }

  /** The answer's text (its text parts), for copying. */
  get text(): string {
    return this.slots
      .filter((s) => s?.view)
      .map((s) => s.view!.value)
      .join('\n\n');
  }

  private add(i: number, slot: Slot): Slot {
    this.slots[i] = slot;
    if (slot.view) slot.node = slot.view.element;
    const next = this.slots.slice(i + 1).find(Boolean);
    this.element.insertBefore(slot.node, next?.node ?? this.sources ?? null);
    return slot;
  }

  private build(part: Part, since: number, growing: boolean, open: boolean, now: number): HTMLElement | undefined {
    const { strings } = this.ctx;
    switch (part.type) {
      case 'reasoning':
        return reasoningPart(String(part.text ?? ''), growing ? undefined : this.elapsed(since, now), growing, strings);
      case 'tool':
        return toolPart(part, strings, this.ctx.decide, open);
      case 'file':
        return filePart(part);
      case 'data': {
        const render = this.ctx.renderers.get(String(part.name));
        if (!render) return undefined;
        try {
          const node = render(part.data, part);
          return node ? h('div', { class: 'data' }, node) : undefined;
        } catch {
          return undefined; // an integrator's renderer must not break the transcript
        }
      }
      default:
        return undefined;
    }
  }

  /** Seconds a reasoning part was the growing one; unknown for parts that arrived complete. */
  private elapsed(since: number, now: number): number | undefined {
    const s = (now - since) / 1000;
    return s >= 0.5 ? s : undefined;
  }
}
