import { createServer, type Server as HttpServer } from 'node:http';
import express, { type Express } from 'express';
import { Server } from 'socket.io';
import type { Infrastructure } from '../cluster/infrastructure';
import type { HubConfig } from '../config/config';
import type { HubMetrics } from '../metrics/metrics';
import type { ClientIpResolver } from '../net/client-ip';
import { ConnectionInfoRegistry } from '../net/connection-info';
import { installEngineGate } from '../net/engine-gate';
import { SendBuffers } from '../net/send-buffers';
import { boundedWebSocketServer } from '../net/websocket-engine';

/** One replica's network front: the HTTP server that Express and Socket.IO share, gated and buffer-bounded. */
export interface Transport {
  /** Handles every request engine.io does not take; its routes are mounted once the relay they act on exists. */
  app: Express;
  httpServer: HttpServer;
  io: Server;
  sendBuffers: SendBuffers;
  /** Client address and Origin of every engine.io connection. */
  connections: ConnectionInfoRegistry;
}

/** What the engine gate refuses connections by, besides the configured limits. */
export interface TransportGate {
  clientIp: ClientIpResolver;
  metrics: HubMetrics;
  isDraining: () => boolean;
}

/**
 * Builds the Express app, the HTTP server that hands it every request engine.io does not take, and
 * Socket.IO on that server with the cluster's adapter, the engine gate and the send buffers.
 */
export function createTransport(config: HubConfig, infra: Infrastructure, gate: TransportGate): Transport {
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
    clientIp: gate.clientIp,
    connections,
    metrics: gate.metrics,
    isDraining: gate.isDraining,
  });
  sendBuffers.install(io);
  return { app, httpServer, io, sendBuffers, connections };
}

function corsOrigin(origins: readonly string[]): string[] | boolean {
  return origins.includes('*') ? true : [...origins];
}
