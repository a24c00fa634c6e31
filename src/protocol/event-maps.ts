/**
 * The typed event maps Socket.IO's generics take, one per direction of each namespace: every event's
 * payload and ack, as declared in `payloads.ts`.
 */
import type {
  ActivityUpdate,
  AgentActivity,
  AgentApproval,
  AgentDebug,
  AgentFeedback,
  AgentInboundMessage,
  AgentReply,
  AgentStatus,
  AgentStop,
  ApprovalAck,
  ApprovalRequest,
  AuthExpiring,
  AuthRefresh,
  ClientConversationControl,
  ClientInboundMessage,
  ClientMessage,
  ConversationControl,
  DebugAck,
  DebugTrace,
  FeedbackRequest,
  HandoffRequest,
  HistoryAck,
  HistoryRequest,
  MessageDelta,
  MessageEnd,
  MessagePartEvent,
  MessageStart,
  OkAck,
  OperatorApprovalRequest,
  OperatorFeedMessage,
  OperatorSession,
  RefreshAck,
  RuntimeAck,
  SendAck,
  SessionClosed,
  SessionInfo,
  StopRequest,
  StreamDelta,
  StreamDeltaAck,
  StreamEnd,
  StreamPart,
  StreamPartAck,
  StreamStart,
  StreamUpdate,
  WatchAck,
  WatchRequest,
} from './payloads';

export interface ClientToHubEvents {
  message: (payload: ClientMessage, ack: (res: SendAck) => void) => void;
  'auth:refresh': (payload: AuthRefresh, ack: (res: RefreshAck) => void) => void;
  history: (payload: HistoryRequest, ack: (res: HistoryAck) => void) => void;
  stop: (payload: StopRequest, ack: (res: OkAck) => void) => void;
  feedback: (payload: FeedbackRequest, ack: (res: OkAck) => void) => void;
  approval: (payload: ApprovalRequest, ack: (res: ApprovalAck) => void) => void;
}

export interface HubToClientEvents {
  session: (info: SessionInfo) => void;
  message: (message: ClientInboundMessage) => void;
  'agent:status': (status: AgentStatus) => void;
  'auth:expiring': (info: AuthExpiring) => void;
  'session:closed': (info: SessionClosed) => void;
  debug: (trace: DebugTrace) => void;
  'message:start': (message: MessageStart) => void;
  'message:delta': (delta: MessageDelta) => void;
  'message:end': (message: MessageEnd) => void;
  'message:part': (part: MessagePartEvent) => void;
  'agent:activity': (activity: AgentActivity) => void;
  'conversation:control': (change: ClientConversationControl) => void;
}

export interface AgentToHubEvents {
  reply: (payload: AgentReply, ack: (res: SendAck) => void) => void;
  debug: (payload: AgentDebug, ack: (res: DebugAck) => void) => void;
  'stream:start': (payload: StreamStart, ack: (res: SendAck) => void) => void;
  /** The ack is optional: a runtime that sends no callback gets none. */
  'stream:delta': (payload: StreamDelta, ack: (res: StreamDeltaAck) => void) => void;
  'stream:part': (payload: StreamPart, ack: (res: StreamPartAck) => void) => void;
  'stream:update': (payload: StreamUpdate, ack: (res: StreamDeltaAck) => void) => void;
  'stream:end': (payload: StreamEnd, ack: (res: SendAck) => void) => void;
  activity: (payload: ActivityUpdate, ack: (res: OkAck) => void) => void;
  handoff: (payload: HandoffRequest, ack: (res: OkAck) => void) => void;
}

export interface OperatorToHubEvents {
  'conversation:watch': (payload: WatchRequest, ack: (res: WatchAck) => void) => void;
  approval: (payload: OperatorApprovalRequest, ack: (res: ApprovalAck) => void) => void;
}

export interface HubToOperatorEvents {
  'operator:session': (info: OperatorSession) => void;
  'conversation:control': (change: ConversationControl) => void;
  'conversation:message': (message: OperatorFeedMessage) => void;
  'message:start': (message: MessageStart) => void;
  'message:delta': (delta: MessageDelta) => void;
  'message:part': (part: MessagePartEvent) => void;
  'message:end': (message: MessageEnd) => void;
  debug: (trace: DebugTrace) => void;
}

export interface HubToAgentEvents {
  message: (message: AgentInboundMessage, ack: (res: RuntimeAck) => void) => void;
  'conversation:control': (change: ConversationControl) => void;
  'session:closed': (info: SessionClosed) => void;
  stop: (request: AgentStop) => void;
  feedback: (feedback: AgentFeedback) => void;
  approval: (approval: AgentApproval, ack: (res: RuntimeAck) => void) => void;
}
