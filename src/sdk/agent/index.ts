export {
  RelayAgent,
  RelayAgentError,
  type ControlHandler,
  type FeedbackHandler,
  type MessageContext,
  type MessageHandler,
} from './relay-agent';
export type { RelayAgentOptions, ReplyMessage, StreamOptions } from './agent-options';
export type { ApprovalHandler } from './approval-inbox';
export { AgentSdkCodes, isConversationHeld } from './agent-error';
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
  ControlState,
  ConversationControl,
  MessageData,
  MessagePart,
  ToolPart,
} from '../../protocol';
