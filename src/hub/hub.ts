import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { getHeapStatistics } from 'node:v8';
import express from 'express';
import { Server } from 'socket.io';
import { AgentKeyMatcher } from '../auth/agent-keys';
import { JwtService } from '../auth/jwt.service';
import { createInfrastructure, type ClusterOptions } from '../cluster/infrastructure';
import type { HubConfig } from '../config/config';
import { publicUrl } from '../config/public-url';
import { attachDemoAgent } from '../demo/demo.agent';
import { demoRouter } from '../demo/demo.routes';
import { createHttpApp } from '../http/app';
import { loadAsyncApiDocument, writeAsyncApiFile } from '../http/asyncapi.docs';
import { writeSpecFile } from '../http/docs';
import { AuthFailureLimiter } from '../limits/auth-failure-limiter';
import { MemoryPressure } from '../limits/memory-pressure';
import { createLogger, type Logger } from '../logging/logger';
import { ThrottledLog } from '../logging/throttled-log';
import { HubMetrics } from '../metrics/metrics';
import { clientIpResolver } from '../net/client-ip';
import { ConnectionInfoRegistry } from '../net/connection-info';
import { installEngineGate } from '../net/engine-gate';
import { SendBuffers } from '../net/send-buffers';
import { SocketGate } from '../net/socket-gate';
import { boundedWebSocketServer } from '../net/websocket-engine';
import { engineConnections, type EngineConnection } from '../internals/engine-io.internals';
import { Namespaces } from '../protocol';
import { AgentStatusAnnouncer } from '../relay/agent-status';
import { DeadlineQueue } from '../relay/deadline-queue';
import { DeactivationSweep } from '../relay/client/deactivation-sweep';
import { RuntimeDeliveries, type DeliveryRecord, type RuntimeDispatcher } from '../relay/dispatcher';
import type { RelayContext, RelayNamespaces } from '../relay/relay.context';
import { attachRelay, closeDefaultNamespace, relayNamespaces } from '../relay/relay';
import { IdleHandback } from '../relay/handoff/idle-handback';
import { consoleRouter } from '../console/console.routes';
import type { RelayService } from '../relay/relay.service';
import type { Store } from '../store/store';

export interface HubDeps {
  /** Root logger; defaults to one at LOG_LEVEL on stdout. */
  logger?: Logger;
  /** Cluster-mode alternatives for benchmarks; production uses the defaults. */
  cluster?: ClusterOptions;
}

/** The relay's parts, for operations and tests that act on live sockets. */
export interface HubRelay {
  service: RelayService;
  namespaces: RelayNamespaces;
  dispatcher: RuntimeDispatcher;
}

export interface Hub {
  httpServer: HttpServer;
  io: Server;
  relay: HubRelay;
  /** Client address and Origin of every engine.io connection. */
  connections: ConnectionInfoRegistry;
  /** This replica's memory against its limit and high-water mark. */
  memory: MemoryPressure;
  store: Store;
  metrics: HubMetrics;
  jwt: JwtService;
  logger: Logger;
  /**
   * Starts what runs in the background (presence refresh and the pub/sub canary in a cluster)
   * and writes OPENAPI_SPEC_FILE and ASYNCAPI_SPEC_FILE. Idempotent; {@link Hub.listen} calls it.
   */
  start(): Promise<void>;
  /** {@link Hub.start}, then listens; resolves with the bound port. */
  listen(port: number, host: string): Promise<number>;
  /**
   * Graceful drain: readiness turns false, new handshakes are refused, connected transports are
   * closed in batches over `graceMs` (clients reconnect elsewhere), then everything is closed.
   */
  drain(graceMs: number): Promise<void>;
  /** Closes everything at once. */
  close(): Promise<void>;
}

/**
 * Builds the hub: HTTP server, Socket.IO with both relay namespaces, the shared state, and the
 * Express app (REST, docs, SDK, health, metrics). Constructs only: nothing listens, no timer runs
 * and no file is written until {@link Hub.listen} (or {@link Hub.start}).
 *
 * @example
 * const { config } = loadConfig();
 * const hub = await createHub(config);
 * const port = await hub.listen(config.PORT, config.HOST);
 * process.on('SIGTERM', () => void hub.drain(config.SHUTDOWN_GRACE_MS));
 */
export async function createHub(config: HubConfig, deps: HubDeps = {}): Promise<Hub> {
  const logger = deps.logger ?? createLogger(config.LOG_LEVEL);
  const metrics = new HubMetrics();
  const infra = await createInfrastructure(config, logger.child({ component: 'cluster' }), metrics, deps.cluster);
  const { store } = infra;
  const clientIp = clientIpResolver(config.TRUST_PROXY);
  const memory = watchMemory(config, metrics, logger.child({ component: 'memory' }));
  let draining = false;
  const isDraining = () => draining;

  // The app exists first so the HTTP server can hand it every request engine.io does not take;
  // its routes are mounted once the relay they act on exists.
  const app = express();
  const httpServer = createServer(app);
  const sendBuffers = new SendBuffers(config.MAX_SOCKET_BUFFER_BYTES, config.MAX_AGENT_SOCKET_BUFFER_BYTES);
  const io = new Server(httpServer, {
    transports: ['websocket', 'polling'],
    wsEngine: boundedWebSocketServer(sendBuffers),
    maxHttpBufferSize: 2 * config.MAX_MESSAGE_BYTES,
    connectTimeout: config.CONNECT_TIMEOUT_MS,
    cors: { origin: corsOrigin(config.CORS_ORIGINS), credentials: false },
    serveClient: false,
  });
  infra.attach(io);
  const connections = new ConnectionInfoRegistry();
  installEngineGate(io, {
    maxConnections: config.MAX_CONNECTIONS,
    maxConnectionsPerIp: config.MAX_CONNECTIONS_PER_IP,
    clientIp,
    connections,
    metrics,
    isDraining,
  });
  sendBuffers.install(io);

  const jwt = new JwtService(config);
  const ctx: RelayContext = {
    config,
    logger: logger.child({ component: 'relay' }),
    metrics,
    store,
    jwt,
    agentKeys: config.AGENT_SHARED_KEYS_ENABLED ? new AgentKeyMatcher(config.AGENT_API_KEYS) : null,
    sessionDeadlines: new DeadlineQueue(),
    authFailures: new AuthFailureLimiter(
      store.limiters,
      config.HANDSHAKE_FAILURES_PER_MIN,
      new ThrottledLog(logger.child({ component: 'auth-failure-limiter' })),
      metrics,
    ),
    connections,
    socketGate: new SocketGate({
      maxConnections: config.MAX_CONNECTIONS,
      maxConnectionsPerIp: config.MAX_CONNECTIONS_PER_IP,
      connectTimeoutMs: config.CONNECT_TIMEOUT_MS,
      metrics,
    }),
    sendBuffers,
    handlerFailures: new ThrottledLog(logger.child({ component: 'relay' })),
    replicaId: infra.replicaId,
    clustered: infra.clustered,
    roomChannel: (room) => infra.roomChannel(room),
    publicationTo: (room, event) => infra.publicationTo(room, event),
    isDraining,
    memory,
    subscriptionsSettled: () => infra.subscriptionsSettled(),
    subscriptionsIntact: () => infra.subscriptions.intact(),
  };
  const namespaces = relayNamespaces(io);
  closeDefaultNamespace(io, ctx);
  const statuses = new AgentStatusAnnouncer(namespaces.client);
  // Presence changes the cluster finds (a dead replica's runtimes expiring) go through the relay's restart grace.
  const deliveries = new RuntimeDeliveries(deliveryMarker(store, metrics, ctx.handlerFailures));
  const dispatcher = infra.bind(namespaces, deliveries, (agentId, online) => service.presenceChanged(agentId, online));
  const { service, streams } = attachRelay(namespaces, ctx, dispatcher, statuses);
  infra.subscriptions.onGap(() => service.sessions.endSessionsAfterSubscriptionGap());
  const idleHandback = new IdleHandback(service.control, config.HANDOFF_SWEEP_MS, ctx.handlerFailures);
  const deactivationSweep = new DeactivationSweep(
    namespaces.client,
    store.deactivations,
    config.DEACTIVATION_RECHECK_S,
    logger.child({ component: 'deactivation-sweep' }),
    metrics,
  );
  const asyncApi = loadAsyncApiDocument(publicUrl(config));
  const readinessChecks = async () => ({
    notDraining: !draining,
    memoryBelowHighWater: !memory.overHighWater,
    ...(await infra.readinessChecks()),
  });
  metrics.readFrom(readinessChecks);

  createHttpApp(
    {
      config,
      logger: logger.child({ component: 'http' }),
      metrics,
      store,
      jwt,
      relay: service,
      authFailures: ctx.authFailures,
      clientIp,
      readiness: async () => {
        const checks = await readinessChecks();
        return { ready: Object.values(checks).every(Boolean), checks };
      },
      // Optional routers: after the SDK, docs and metrics, before the REST routes.
      routers: [consoleRouter(), ...(config.DEMO_ENABLED ? [demoRouter({ jwt, docsLinks: config.API_DOCS_ENABLED })] : [])],
      asyncApi,
    },
    app,
  );
  // The demo's echo bot connects to this hub like any runtime, once it listens.
  const demo = demoAgentOf(config, httpServer, logger);

  const { start, listen, close, drain } = lifecycleOf({
    httpServer,
    io,
    logger,
    // Background work, started in this order and stopped in the reverse one before the transports close.
    background: [infra, memory, deactivationSweep, { start: () => streams.startSweep(), stop: () => streams.stop() }, idleHandback],
    writeFiles: async () => {
      const httpLogger = logger.child({ component: 'http' });
      await Promise.all([
        writeSpecFile(config.OPENAPI_SPEC_FILE, httpLogger),
        writeAsyncApiFile(config.ASYNCAPI_SPEC_FILE, asyncApi, httpLogger),
      ]);
    },
    draining: () => {
      draining = true;
      demo?.drain();
    },
    stopping: () => {
      demo?.close();
      service.stop();
    },
    closeLast: [() => dispatcher.close(), () => infra.close()],
  });

  return {
    httpServer,
    io,
    relay: { service, namespaces, dispatcher },
    connections,
    memory,
    store,
    metrics,
    jwt,
    logger,
    start,
    listen,
    drain,
    close,
  };
}

/** What a hub starts and stops around its server: see {@link lifecycleOf}. */
interface LifecycleParts {
  httpServer: HttpServer;
  io: Server;
  logger: Logger;
  background: { start(): void; stop(): void }[];
  writeFiles(): Promise<void>;
  /** Called first on close and drain: readiness turns false, no new handshake is taken. */
  draining(): void;
  /** Called on close, after {@link draining}, before the background work stops. */
  stopping(): void;
  /** Closed in order once every transport is. */
  closeLast: (() => Promise<void>)[];
}

/** {@link Hub.start}, {@link Hub.listen}, {@link Hub.close} and {@link Hub.drain}, each idempotent where the interface says so. */
function lifecycleOf(parts: LifecycleParts): Pick<Hub, 'start' | 'listen' | 'close' | 'drain'> {
  const { httpServer, io, logger } = parts;
  let started: Promise<void> | undefined;
  const start = () => {
    started ??= (async () => {
      for (const part of parts.background) part.start();
      await parts.writeFiles();
    })();
    return started;
  };
  const listen = async (port: number, host: string) => {
    await start();
    await new Promise<void>((resolve, reject) => {
      httpServer.once('error', reject);
      httpServer.listen(port, host, () => {
        httpServer.off('error', reject);
        resolve();
      });
    });
    return (httpServer.address() as AddressInfo).port;
  };
  let closed: Promise<void> | undefined;
  const close = () => {
    closed ??= (async () => {
      parts.draining();
      parts.stopping();
      for (const part of [...parts.background].reverse()) part.stop();
      // io.close() ends every transport here (`transport close`, which clients reconnect from); a
      // disconnectSockets() would go through the adapter to every replica.
      await new Promise<void>((resolve) => io.close(() => resolve()));
      for (const closeNext of parts.closeLast) await closeNext();
    })();
    return closed;
  };
  const drain = async (graceMs: number) => {
    parts.draining();
    logger.info({ graceMs }, 'draining: refusing new connections, closing transports in batches');
    await closeTransportsInBatches(io, graceMs);
    await close();
  };
  return { start, listen, close, drain };
}

/** This replica's memory against its limit and high-water mark, its crossings logged and exported. */
function watchMemory(config: HubConfig, metrics: HubMetrics, memoryLogger: Logger): MemoryPressure {
  const memory = new MemoryPressure({
    limitBytes: config.MEMORY_LIMIT_BYTES,
    highWaterRatio: config.MEMORY_HIGH_WATER_RATIO,
    lowWaterRatio: config.MEMORY_LOW_WATER_RATIO,
  });
  metrics.watchMemory(memory);
  memory.on('change', (over) => {
    const heap = getHeapStatistics();
    const state = {
      usageBytes: memory.usage(),
      limitBytes: memory.limit,
      limitFrom: memory.source,
      heapUsedBytes: heap.used_heap_size,
      heapLimitBytes: heap.heap_size_limit,
    };
    if (over) memoryLogger.warn(state, 'memory past the high-water mark: unready, refusing new handshakes (SERVER_BUSY)');
    else memoryLogger.info(state, 'memory below the low-water mark: ready, taking new handshakes again');
  });
  return memory;
}

/** The delivered mark, written where the runtime acked (relay/dispatcher.ts); its failure changes no ack. */
function deliveryMarker(store: Store, metrics: HubMetrics, failures: ThrottledLog): (record: DeliveryRecord) => Promise<void> {
  return ({ key, record, ttlS }) =>
    store.dedupe.markDelivered(key, record, ttlS).catch((err: unknown) => {
      metrics.redisErrors.inc({ component: 'dedupe' });
      failures.warn('dedupe', err, 'could not record a delivery (acked ok anyway; a retry would redeliver the same id)');
    });
}

/** The demo's echo bot, which connects to this hub like any runtime once it listens (DEMO_ENABLED). */
function demoAgentOf(config: HubConfig, httpServer: HttpServer, logger: Logger) {
  if (!config.DEMO_ENABLED || !config.AGENT_SHARED_KEYS_ENABLED) return undefined;
  return attachDemoAgent(httpServer, {
    apiKey: config.AGENT_API_KEYS[0],
    logger: logger.child({ component: 'demo' }),
    ...(config.PUBLIC_URL ? { publicUrl: config.PUBLIC_URL } : {}),
  });
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
  const all = engineConnections(io);
  const agentConns = new Set<EngineConnection>();
  for (const socket of io.of(Namespaces.agent).sockets.values()) agentConns.add(socket.conn);
  const clients = [...all.filter((c) => !agentConns.has(c)), ...all.filter((c) => agentConns.has(c))];
  const batches = 10;
  const perBatch = Math.ceil(clients.length / batches);
  const pause = (graceMs * 0.8) / batches;
  for (let i = 0; i < clients.length; i += perBatch) {
    for (const conn of clients.slice(i, i + perBatch)) conn.close();
    if (i + perBatch < clients.length) await new Promise((resolve) => setTimeout(resolve, pause));
  }
}
