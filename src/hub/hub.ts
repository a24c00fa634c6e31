import type { Server as HttpServer } from 'node:http';
import { getHeapStatistics } from 'node:v8';
import type { Express } from 'express';
import type { Server } from 'socket.io';
import { AgentKeyMatcher } from '../auth/agent-keys';
import { JwtService } from '../auth/jwt.service';
import { createInfrastructure, type ClusterOptions, type Infrastructure } from '../cluster/infrastructure';
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
import { clientIpResolver, type ClientIpResolver } from '../net/client-ip';
import type { ConnectionInfoRegistry } from '../net/connection-info';
import { SocketGate } from '../net/socket-gate';
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
import { lifecycleOf, type BackgroundWork } from './lifecycle';
import { createTransport, type Transport } from './transport';

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
  const base: HubBase = { config, logger, metrics, infra, clientIp, memory, isDraining: () => draining };

  // The app exists first so the HTTP server can hand it every request engine.io does not take;
  // its routes are mounted once the relay they act on exists.
  const transport = createTransport(config, infra, base);
  const { httpServer, io, connections } = transport;
  const jwt = new JwtService(config);
  const ctx = relayContextOf(base, transport, jwt);
  const { relay, background } = attachRelayParts(base, io, ctx);
  const asyncApi = mountHttpApp(base, transport.app, ctx, relay.service);
  // The demo's echo bot connects to this hub like any runtime, once it listens.
  const demo = demoAgentOf(config, httpServer, logger);

  const lifecycle = lifecycleOf({
    httpServer,
    io,
    logger,
    // Background work, started in this order and stopped in the reverse one before the transports close.
    background: [infra, memory, ...background],
    writeFiles: () => writeApiFiles(config, asyncApi, logger),
    draining: () => {
      draining = true;
      demo?.drain();
    },
    stopping: () => {
      demo?.close();
      relay.service.stop();
    },
    closeLast: [() => relay.dispatcher.close(), () => infra.close()],
  });
  return { httpServer, io, relay, connections, memory, store, metrics, jwt, logger, ...lifecycle };
}

/** What every step of {@link createHub} builds on: one replica's configuration, logging, metrics, infrastructure and state. */
interface HubBase {
  config: HubConfig;
  logger: Logger;
  metrics: HubMetrics;
  infra: Infrastructure;
  clientIp: ClientIpResolver;
  memory: MemoryPressure;
  /** True from the moment the hub starts draining or closing. */
  isDraining: () => boolean;
}

/** What the relay shares between its handlers: the shared state, the limits and gates, and the cluster's channels. */
function relayContextOf(base: HubBase, transport: Transport, jwt: JwtService): RelayContext {
  const { config, logger, metrics, infra, memory, isDraining } = base;
  const { store } = infra;
  const { connections, sendBuffers } = transport;
  return {
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
    frames: infra.frames,
    isDraining,
    memory,
    subscriptionsSettled: () => infra.subscriptionsSettled(),
    subscriptionsIntact: () => infra.subscriptions.intact(),
  };
}

/** The relay's parts, and the background work that runs beside it. */
interface RelayParts {
  relay: HubRelay;
  /** The deactivation sweep, the stream sweep and the idle handback, in the order they start. */
  background: BackgroundWork[];
}

/**
 * Attaches both relay namespaces to `io` and binds them to the cluster: runtime deliveries, presence,
 * the end of sessions after a subscription gap. Starts nothing: see {@link RelayParts.background}.
 */
function attachRelayParts(base: HubBase, io: Server, ctx: RelayContext): RelayParts {
  const { config, logger, metrics, infra } = base;
  const { store } = infra;
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
  const streamSweep = { start: () => streams.startSweep(), stop: () => streams.stop() };
  return { relay: { service, namespaces, dispatcher }, background: [deactivationSweep, streamSweep, idleHandback] };
}

/**
 * Mounts the Express app's routes (REST, docs, SDK, health with readiness, metrics) and has the
 * metrics read the readiness checks. Returns the AsyncAPI document it serves, for
 * {@link writeApiFiles}.
 */
function mountHttpApp(base: HubBase, app: Express, ctx: RelayContext, relay: RelayService): Record<string, unknown> {
  const { config, logger, metrics, infra, clientIp, memory, isDraining } = base;
  const { jwt } = ctx;
  const asyncApi = loadAsyncApiDocument(publicUrl(config));
  const readinessChecks = async () => ({
    notDraining: !isDraining(),
    memoryBelowHighWater: !memory.overHighWater,
    ...(await infra.readinessChecks()),
  });
  metrics.readFrom(readinessChecks);

  createHttpApp(
    {
      config,
      logger: logger.child({ component: 'http' }),
      metrics,
      store: infra.store,
      jwt,
      relay,
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
  return asyncApi;
}

/** Writes OPENAPI_SPEC_FILE and ASYNCAPI_SPEC_FILE: atomically, and a failure is logged, never thrown (http/docs.ts). */
async function writeApiFiles(config: HubConfig, asyncApi: Record<string, unknown>, logger: Logger): Promise<void> {
  const httpLogger = logger.child({ component: 'http' });
  await Promise.all([
    writeSpecFile(config.OPENAPI_SPEC_FILE, httpLogger),
    writeAsyncApiFile(config.ASYNCAPI_SPEC_FILE, asyncApi, httpLogger),
  ]);
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
