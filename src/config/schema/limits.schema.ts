/** Sizes, rates, timeouts and connection caps that protect a replica. */
export const limitsSchema = {
  MAX_MESSAGE_BYTES: {
    doc: 'Largest relayed message (UTF-8 bytes of text, and of the whole payload). Socket.IO frames are capped at twice this.',
    format: 'nat',
    default: 65536,
    env: 'MAX_MESSAGE_BYTES',
  },
  AGENT_ACK_TIMEOUT_MS: {
    doc: 'How long the hub waits for an agent runtime to acknowledge a client message before acking TIMEOUT.',
    format: 'nat',
    default: 10000,
    env: 'AGENT_ACK_TIMEOUT_MS',
  },
  DEDUPE_WINDOW_S: {
    doc: 'Seconds a (agentId, sub, clientMessageId) record is kept to drop retried client messages.',
    format: 'nat',
    default: 600,
    env: 'DEDUPE_WINDOW_S',
  },
  MESSAGE_RATE_PER_S: {
    doc: 'Sustained events per second one client socket may send (token bucket refill rate; 0 = unlimited); excess gets RATE_LIMITED.',
    format: 'nat',
    default: 20,
    env: 'MESSAGE_RATE_PER_S',
  },
  MESSAGE_RATE_BURST: {
    doc: 'Token bucket size for client socket events; a socket refused this many times in a row is disconnected with RATE_LIMITED.',
    format: 'nat',
    default: 40,
    env: 'MESSAGE_RATE_BURST',
  },
  AGENT_MESSAGE_RATE_PER_S: {
    doc: 'Sustained events per second one agent runtime socket may send (0 = unlimited); excess gets RATE_LIMITED.',
    format: 'nat',
    default: 2000,
    env: 'AGENT_MESSAGE_RATE_PER_S',
  },
  AGENT_MESSAGE_RATE_BURST: {
    doc: 'Token bucket size for agent runtime socket events; refused this many times in a row disconnects the runtime.',
    format: 'nat',
    default: 4000,
    env: 'AGENT_MESSAGE_RATE_BURST',
  },
  HANDSHAKE_FAILURES_PER_MIN: {
    doc: 'Failed authentications (refused handshakes and REST 401s; not Origin refusals) allowed per client IP per minute, and again per IP and verified identity (token sub, API key). Past the IP budget, credentials that do not verify get RATE_LIMITED or 429; verified ones still get in unless their own identity is past its budget (shared through Redis when configured; 0 = unlimited).',
    format: 'nat',
    default: 30,
    env: 'HANDSHAKE_FAILURES_PER_MIN',
  },
  DEACTIVATION_RECHECK_S: {
    doc: 'Every this many seconds each replica re-checks the users of its live client sessions against the deactivations and closes those of deactivated users, so a session that missed the deactivation broadcast still ends (0 = off; auth:refresh checks regardless).',
    format: 'nat',
    default: 60,
    env: 'DEACTIVATION_RECHECK_S',
  },
  MAX_CONNECTIONS_PER_IP: {
    doc: 'Concurrent connections per client IP on one replica, refused before the websocket upgrade (0 = unlimited).',
    format: 'nat',
    default: 1000,
    env: 'MAX_CONNECTIONS_PER_IP',
  },
  MAX_CONNECTIONS: {
    doc: 'Concurrent connections per replica, refused before the websocket upgrade (0 = unlimited).',
    format: 'nat',
    default: 20000,
    env: 'MAX_CONNECTIONS',
  },
  CONNECT_TIMEOUT_MS: {
    doc: 'A connection that has not joined a namespace within this time is closed.',
    format: 'nat',
    default: 10000,
    env: 'CONNECT_TIMEOUT_MS',
  },
  METRICS_TOKEN: {
    doc: 'When set (≥ 32 chars), /metrics answers only requests with `Authorization: Bearer <METRICS_TOKEN>` (else 401). Set it wherever /metrics is reachable from outside, e.g. behind an Ingress.',
    format: 'secret',
    default: null as string | null,
    env: 'METRICS_TOKEN',
    sensitive: true,
  },
  REST_BODY_LIMIT_BYTES: {
    doc: 'Largest accepted REST request body; larger bodies get 413.',
    format: 'nat',
    default: 131072,
    env: 'REST_BODY_LIMIT_BYTES',
  },
};
