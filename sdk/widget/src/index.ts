/**
 * The relay-hub chat widget (docs/widget.md): the `<relay-chat>` custom element, built on the
 * browser SDK. `defineRelayChat()` registers the element; the hub's `/sdk/widget.mjs` and
 * `/sdk/widget.js` do so themselves.
 */
import { RelayChatElement } from './element';

export { RelayChatElement } from './element';
export { Transcript, type TranscriptOptions } from './transcript/transcript';
export type { ViewMessage, MessageActions } from './transcript/message-view';
export type { Part, DataRenderer, ToolState, Approval } from './transcript/parts/types';
export { STRINGS, type Strings } from './strings';

/**
 * Registers `<relay-chat>` (once per page). `url` is the hub origin used when an element has no
 * `url` attribute.
 *
 * @example
 * import { defineRelayChat } from '@relay-hub/widget';
 * defineRelayChat({ url: 'https://relay.example.com' });
 */
export function defineRelayChat(options: { url?: string } = {}): typeof RelayChatElement {
  if (options.url) RelayChatElement.defaultUrl = options.url;
  if (!customElements.get('relay-chat')) customElements.define('relay-chat', RelayChatElement);
  return RelayChatElement;
}
