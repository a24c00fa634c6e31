// The hub's settings in every bench: production mode, quiet logs, and the per-address, per-socket,
// per-user and per-bot limits out of the way, since all load comes from one machine (often one address).

import { createRequire } from 'node:module';

/** The node flags deploy/Dockerfile and `npm start` run the hub with (deploy/cluster.cjs keeps the list). */
export const { HUB_NODE_FLAGS } = createRequire(import.meta.url)('../deploy/cluster.cjs');

/** Environment for a hub under bench load; `overrides` (secrets, ports, files) win. */
export function benchHubEnv(overrides = {}) {
  return {
    NODE_ENV: 'production',
    // Production refuses to start without it; no bench calls an admin route.
    ADMIN_JWT_SECRET: 'bench-admin-secret-apart-from-every-chat-secret',
    LOG_LEVEL: 'warn',
    MESSAGE_RATE_PER_S: '0',
    AGENT_MESSAGE_RATE_PER_S: '0',
    // Each generated client relays far faster than a person: the budget is checked (its cost is
    // measured) but never spent.
    USER_MESSAGE_RATE_PER_S: '1000000',
    USER_MESSAGE_RATE_BURST: '1000000',
    // Likewise the bots' delivery budget (bench/delivery-fairness.mjs measures it at its defaults).
    AGENT_DELIVERY_RATE_PER_S: '100000000',
    AGENT_DELIVERY_RATE_BURST: '100000000',
    HANDSHAKE_FAILURES_PER_MIN: '0',
    MAX_CONNECTIONS_PER_IP: '0',
    API_DOCS_ENABLED: 'false',
    DEMO_ENABLED: 'false',
    ...overrides,
  };
}

/**
 * Refuses to measure under another Node major than the hub is built for (package.json engines):
 * `node bench/….mjs` outside npm runs the system Node, and every server the bench starts inherits
 * it. BENCH_ANY_NODE=1 measures another Node on purpose.
 */
export function requireHubNode() {
  const major = Number(process.versions.node.split('.')[0]);
  if (major === 24 || process.env.BENCH_ANY_NODE === '1') return;
  process.stderr.write(
    `bench: this is Node ${process.version}, but the hub runs on Node 24 (package.json engines). Run it ` +
      'through npm (`npm run bench`, `npm run bench:profile`), which puts node_modules/.bin/node first on PATH, ' +
      'or set BENCH_ANY_NODE=1 to measure another Node on purpose.\n',
  );
  process.exit(1);
}
