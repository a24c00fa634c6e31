// The hub's settings in every bench: production mode, quiet logs, and the per-address and
// per-socket limits out of the way, since all load comes from one machine (often one address).

/** What deploy/Dockerfile and `npm start` run the hub with. */
export const HUB_NODE_FLAGS = '--max-semi-space-size=16';

/** Environment for a hub under bench load; `overrides` (secrets, ports, files) win. */
export function benchHubEnv(overrides = {}) {
  return {
    NODE_ENV: 'production',
    LOG_LEVEL: 'warn',
    MESSAGE_RATE_PER_S: '0',
    AGENT_MESSAGE_RATE_PER_S: '0',
    HANDSHAKE_FAILURES_PER_MIN: '0',
    MAX_CONNECTIONS_PER_IP: '0',
    API_DOCS_ENABLED: 'false',
    DEMO_ENABLED: 'false',
    ...overrides,
  };
}
