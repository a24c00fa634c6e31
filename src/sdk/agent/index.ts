export {
  RelayAgent,
  RelayAgentError,
  type ApprovalHandler,
  type FeedbackHandler,
  type MessageContext,
  type MessageHandler,
  type RelayAgentOptions,
  type ReplyMessage,
  type StreamOptions,
} from './relay-agent';
export { AgentSdkCodes } from './agent-error';
export type { AgentStream, StreamEndOptions } from './agent-stream';
export type { DeltaRate } from './delta-budget';
export type { NewToolCall, PartWriter, ToolCall } from './part-handles';
export type { StreamResult } from './stream-from';
export type { UIMessageSource, UIMessageStreamResult } from './ui-message-stream';
export type { UIMessageChunk } from '../../protocol/ui-message-chunk';
export type {
  ActivityState,
  AgentApproval,
  AgentFeedback,
  AgentInboundMessage,
  AgentStreamStatus,
  MessageData,
  MessagePart,
  ToolPart,
} from '../../protocol';
