import { h, type Child } from '../../dom';
import { icon } from '../../icons';
import { fill, type Strings } from '../../strings';
import type { Part } from './types';

type ToolPart = Extract<Part, { type: 'tool' }>;

/** Decides an approval: resolves when the hub has recorded it; rejects with the reason it could not. */
export type Decide = (approvalId: string, approved: boolean) => Promise<void>;

/**
 * A tool call: a compact row (icon, title or tool name, state: spinner, check or warning) that
 * expands to its input and output as formatted JSON, built only when opened. An approval request is a
 * card with Approve and Deny; once decided (here or in another tab) it says who decided.
 */
export function toolPart(part: ToolPart, strings: Strings, decide: Decide | undefined, open: boolean): HTMLElement {
  const state = part.state;
  const [mark, label] =
    state === 'output-available'
      ? [icon('check', 'ok'), strings.done]
      : state === 'output-error'
        ? [icon('warn', 'bad'), strings.failed]
        : state === 'output-denied'
          ? [icon('warn', 'bad'), strings.denied]
          : state === 'approval-requested'
            ? [icon('warn', 'ask'), strings.needsApproval]
            : [icon('spinner', 'spin'), strings.running];
  const details = h(
    'details',
    { class: 'step tool', 'data-state': state, open },
    h(
      'summary',
      null,
      icon('tool'),
      h('span', { class: 'name' }, String(part.title ?? part.toolName ?? '')),
      h('span', { class: 'state' }, mark, label),
    ),
  );
  const fill_ = () => {
    if (details.childElementCount > 1) return;
    const blocks: Child[] = [];
    if (part.input !== undefined) blocks.push(h('div', { class: 'label' }, strings.input), json(part.input));
    if (part.output !== undefined) blocks.push(h('div', { class: 'label' }, strings.output), json(part.output));
    if (typeof part.errorText === 'string') blocks.push(h('p', { class: 'error' }, part.errorText));
    details.append(h('div', { class: 'io' }, ...blocks));
  };
  if (open) fill_();
  details.addEventListener('toggle', () => details.open && fill_());
  const approval = part.approval;
  if (!approval || typeof approval.id !== 'string') return details;
  const card = h('div', { class: 'approval', role: 'group', 'aria-label': String(part.title ?? part.toolName) }, details);
  if (state === 'approval-requested' && approval.approved === undefined) {
    const approve = h('button', { type: 'button', class: 'btn primary' }, strings.approve);
    const deny = h('button', { type: 'button', class: 'btn' }, strings.deny);
    const note = h('p', { class: 'muted', role: 'status' });
    const act = (approved: boolean) => {
      if (!decide) return;
      approve.setAttribute('disabled', '');
      deny.setAttribute('disabled', '');
      decide(approval.id, approved).catch((e: unknown) => {
        note.textContent = e instanceof Error ? e.message : strings.error;
        approve.removeAttribute('disabled');
        deny.removeAttribute('disabled');
      });
    };
    approve.addEventListener('click', () => act(true));
    deny.addEventListener('click', () => act(false));
    if (!decide) [approve, deny].forEach((b) => b.setAttribute('disabled', ''));
    card.append(h('div', { class: 'row' }, approve, deny), note);
  } else if (approval.approved !== undefined) {
    const who = approval.decidedBy && approval.decidedBy !== 'user' ? approval.decidedBy : strings.you.toLowerCase();
    card.append(
      h(
        'p',
        { class: 'decided' },
        icon(approval.approved ? 'check' : 'close'),
        fill(approval.approved ? strings.approvedBy : strings.deniedBy, { name: who }),
      ),
    );
  }
  return card;
}

function json(value: unknown): HTMLElement {
  let text: string;
  try {
    text = JSON.stringify(value, null, 2) ?? String(value);
  } catch {
    text = String(value);
  }
  return h('pre', { class: 'json', tabindex: 0 }, text);
}
