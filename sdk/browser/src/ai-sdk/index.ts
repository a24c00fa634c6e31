/**
 * The browser SDK's Vercel AI SDK transport (`@relay-hub/browser/ai-sdk`): `useChat({ transport })`
 * or any `AbstractChat` through a relay hub (docs/ai-sdk.md). No dependency on `ai` at run time.
 */
export { RelayChatTransport, type AttachableChat, type SendMessagesOptions, type SentUIMessage } from './relay-chat-transport';
export { MessageChunker, partsOf, type HubContent } from './ui-chunks';
export { toUIMessage, type RelayToolUIPart, type RelayUIMessage, type RelayUIPart } from './ui-messages';
export type { UIMessageChunk } from '../../../../src/protocol/ui-message-chunk';
