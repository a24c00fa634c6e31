export { RelayAgent, RelayAgentError, type MessageHandler, type RelayAgentOptions } from './relay-agent';
export type { AgentInboundMessage, MessageData } from '../../protocol';
