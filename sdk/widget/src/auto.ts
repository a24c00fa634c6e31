// The hub's /sdk/widget.mjs: the package's API, with <relay-chat> registered and the hub's origin
// (where this module was loaded from) as the default `url`.
import { defineRelayChat } from './index';

export * from './index';
defineRelayChat({ url: new URL(import.meta.url).origin });
