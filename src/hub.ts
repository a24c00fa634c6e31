import { createServer, type Server as HttpServer } from 'node:http';
import { Server } from 'socket.io';
import { AgentKeyMatcher } from './auth/agent-keys';
import { JwtService } from './auth/jwt.service';
import type { HubConfig } from './config/config';
import { createHttpApp } from './http/app';
import { attachDemoAgent } from './http/demo/demo.agent';
import { clientIpResolver } from './http/client-ip';
import { createLogger, type Logger } from './logging/logger';
import { ThrottledLog } from './logging/throttled-log';
import { HubMetrics } from './metrics/metrics';
import { installEngineGate } from './relay/engine-gate';
import { DeadlineQueue } from './relay/deadline-queue';
import { AuthFailureLimiter } from './relay/auth-failure-limiter';
import { Namespaces } from './relay/protocol';
import type { RelayContext } from './relay/relay.context';
import { attachRelay, type Relay } from './relay/relay';
import type { Store } from './store/store';
import { createInfrastructure, type ClusterOptions } from './cluster/infrastructure';

export interface HubDeps {
  /** Root logger; defaults to one at LOG_LEVEL on stdout. */
  logger?: Logger;
  /** Cluster-mode alternatives for benchmarks; production uses the defaults. */
  cluster?: ClusterOptions;
}

export interface Hub {
  httpServer: HttpServer;
  io: Server;
  relay: Relay;
  store: Store;
  metrics: HubMetrics;
  jwt: JwtService;
  logger: Logger;
  /**
   * Graceful drain: readiness turns false, new handshakes are refused, connected transports are
   * closed in batches over `graceMs` (clients reconnect elsewhere), then everything is closed.
   */
  drain(graceMs: number): Promise<void>;
  /** Closes everything at once. */
  close(): Promise<void>;
}

/**
 * Builds the hub: Express app (REST, docs, SDK, health, metrics), Socket.IO with both relay
 * namespaces, and the store. Does not listen; `main.ts` does.
 */
export async function createHub(config: HubConfig, deps: HubDeps = {}): Promise<Hub> {
  const logger = deps.logger ?? createLogger(config.LOG_LEVEL);
  const metrics = new HubMetrics();
  const infra = await createInfrastructure(config, logger.child({ component: 'cluster' }), metrics, deps.cluster);
  const { store } = infra;
  const clientIp = clientIpResolver(config.TRUST_PROXY);
  let draining = false;
  const isDraining = () => draining;

  const jwt = new JwtService(config);
  const ctx: RelayContext = {
    config,
    logger: logger.child({ component: 'relay' }),
    metrics,
    store,
    jwt,
    agentKeys: new AgentKeyMatcher(config.AGENT_API_KEYS),
    sessionDeadlines: new DeadlineQueue(),
    authFailures: new AuthFailureLimiter(
      store.kind === 'redis' ? store.counters : null,
      config.HANDSHAKE_FAILURES_PER_MIN,
      new ThrottledLog(logger.child({ component: 'auth-failure-limiter' })),
      metrics,
    ),
    replicaId: infra.replicaId,
    isDraining,
  };

  const app = createHttpApp({
    config,
    logger: logger.child({ component: 'http' }),
    metrics,
    store,
    jwt,
    relay: () => relay.service,
    authFailures: ctx.authFailures,
    clientIp,
    readiness: async () => {
      const checks = { notDraining: !draining, ...(await infra.readinessChecks()) };
      return { ready: Object.values(checks).every(Boolean), checks };
    },
  });
  const httpServer = createServer(app);
  const io = new Server(httpServer, {
    transports: ['websocket', 'polling'],
    maxHttpBufferSize: 2 * config.MAX_MESSAGE_BYTES,
    connectTimeout: config.CONNECT_TIMEOUT_MS,
    cors: { origin: corsOrigin(config.CORS_ORIGINS), credentials: false },
    serveClient: false,
  });
  infra.attach(io);
  installEngineGate(io, {
    maxConnections: config.MAX_CONNECTIONS,
    maxConnectionsPerIp: config.MAX_CONNECTIONS_PER_IP,
    clientIp,
    metrics,
    isDraining,
  });
  const relay = attachRelay(io, ctx, (namespaces) => infra.createDispatcher(namespaces));
  // The demo's echo bot connects to this hub like any runtime, once it listens.
  const demo = config.DEMO_ENABLED
    ? attachDemoAgent(httpServer, { apiKey: config.AGENT_API_KEYS[0]!, logger: logger.child({ component: 'demo' }) })
    : undefined;

  let closed: Promise<void> | undefined;
  const close = () => {
    closed ??= (async () => {
      draining = true;
      demo?.close();
      // io.close() ends every transport here (`transport close`, which clients reconnect from); a
      // disconnectSockets() would go through the adapter to every replica.
      await new Promise<void>((resolve) => io.close(() => resolve()));
      await relay.dispatcher.close();
      ctx.authFailures.close();
      await infra.close();
    })();
    return closed;
  };

  const drain = async (graceMs: number) => {
    draining = true;
    logger.info({ graceMs }, 'draining: refusing new connections, closing transports in batches');
    await closeTransportsInBatches(io, graceMs);
    await close();
  };

  return { httpServer, io, relay, store, metrics, jwt, logger, drain, close };
}

function corsOrigin(origins: readonly string[]): string[] | boolean {
  return origins.includes('*') ? true : [...origins];
}

/**
 * Closes engine connections (not Socket.IO sockets: clients must see `transport close`, which they
 * reconnect from, never `io server disconnect`) in ten batches spread over most of the grace period.
 * Browser clients go first and agent runtimes last, so the bot keeps answering while clients move
 * and deliveries already on their way to a runtime here can still be acknowledged.
 */
async function closeTransportsInBatches(io: Server, graceMs: number): Promise<void> {
  type Conn = { close(): void };
  const all = Object.values((io.engine as unknown as { clients: Record<string, Conn> }).clients);
  const agentConns = new Set<Conn>();
  for (const socket of io.of(Namespaces.agent).sockets.values()) agentConns.add(socket.conn as unknown as Conn);
  const clients = [...all.filter((c) => !agentConns.has(c)), ...all.filter((c) => agentConns.has(c))];
  const batches = 10;
  const perBatch = Math.ceil(clients.length / batches);
  const pause = (graceMs * 0.8) / batches;
  for (let i = 0; i < clients.length; i += perBatch) {
    for (const conn of clients.slice(i, i + perBatch)) conn.close();
    if (i + perBatch < clients.length) await new Promise((resolve) => setTimeout(resolve, pause));
  }
}
