// The hub's /sdk/widget.js, for one tag in a page (docs/widget.md):
//   <script src="https://HUB/sdk/widget.js" data-agent-id="support-bot" data-token-url="/chat-token" async></script>
// registers <relay-chat> and appends one, configured from the tag's data-* attributes, to <body>.
import { defineRelayChat } from './index';

const script = document.currentScript as HTMLScriptElement | null;
const origin = script?.src ? new URL(script.src).origin : undefined;
const Element = defineRelayChat({ url: origin });
(globalThis as { RelayChatWidget?: unknown }).RelayChatWidget = { RelayChatElement: Element, defineRelayChat };

if (script?.hasAttribute('data-agent-id')) {
  const mount = () => {
    const el = document.createElement('relay-chat');
    // Every attribute the element reads, from its `data-*` twin (`data-agent-id` → `agent-id`, …).
    for (const name of Element.observedAttributes) {
      const value = script.getAttribute(`data-${name}`);
      if (value !== null) el.setAttribute(name, value);
    }
    document.body.appendChild(el);
  };
  if (document.body) mount();
  else document.addEventListener('DOMContentLoaded', mount, { once: true });
}
