export {
  RelayAgent,
  RelayAgentError,
  type ControlHandler,
  type FeedbackHandler,
  type MessageContext,
  type MessageHandler,
  type RelayAgentOptions,
  type StreamOptions,
} from './relay-agent';
export { AgentSdkCodes, isConversationHeld } from './agent-error';
export type { AgentStream, StreamEndOptions } from './agent-stream';
export type { DeltaRate } from './delta-budget';
export type { StreamResult } from './stream-from';
export type {
  ActivityState,
  AgentFeedback,
  AgentInboundMessage,
  AgentStreamStatus,
  ControlState,
  ConversationControl,
  MessageData,
} from '../../protocol';
