import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server } from 'socket.io';
import { io as connect, type Socket } from 'socket.io-client';
import WebSocket from 'ws';
import type { EventEmitter } from 'node:events';
import {
  engineConnections,
  releaseUpgradeListeners,
  transportWebSocket,
  upgradeResponseCloseListener,
} from '../../../src/internals/engine-io.internals';
import { BatchingWebSocketServer } from '../../../src/net/websocket-engine';

// src/internals/engine-io.internals.ts reads Engine.IO's private map of open connections: it must
// hold every open connection (in a namespace or not yet), and closing one must end the transport,
// which a client hears as `transport close` (it reconnects), never `io server disconnect`.
describe('engine.io internals', () => {
  it('Server#clients holds every open connection, and closing one closes its transport', async () => {
    const httpServer = createServer();
    const io = new Server(httpServer, { transports: ['websocket'] });
    io.of('/other');
    await new Promise<void>((resolve) => httpServer.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(httpServer.address() as AddressInfo).port}`;
    const clients: Socket[] = [];
    try {
      for (const nsp of ['/', '/other']) {
        const client = connect(`${url}${nsp}`, { transports: ['websocket'], forceNew: true, reconnection: false });
        clients.push(client);
        await new Promise<void>((resolve) => client.once('connect', () => resolve()));
      }
      expect(engineConnections(io)).toHaveLength(2);
      const reasons = clients.map((client) => new Promise((resolve) => client.once('disconnect', resolve)));
      for (const conn of engineConnections(io)) conn.close();
      expect(await Promise.all(reasons)).toEqual(['transport close', 'transport close']);
    } finally {
      for (const client of clients) client.close();
      await new Promise((resolve) => io.close(resolve));
    }
  });

  it('a websocket transport keeps its ws connection in WebSocket#socket; polling has none', async () => {
    const httpServer = createServer();
    // The hub's wsEngine, as createHub installs it: the connection is the hub's own `ws`.
    const io = new Server(httpServer, { wsEngine: BatchingWebSocketServer });
    await new Promise<void>((resolve) => httpServer.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(httpServer.address() as AddressInfo).port}`;
    const clients: Socket[] = [];
    try {
      const found: (WebSocket | null)[] = [];
      for (const transports of [['websocket'], ['polling']]) {
        const opened = new Promise<{ transport: { name: string } }>((resolve) => io.engine.once('connection', resolve));
        const client = connect(url, { transports, forceNew: true, reconnection: false });
        clients.push(client);
        found.push(transportWebSocket((await opened).transport));
      }
      expect(found[0]).toBeInstanceOf(WebSocket);
      expect(found[0]?.readyState).toBe(WebSocket.OPEN);
      expect(typeof found[0]?.bufferedAmount).toBe('number');
      expect(found[1]).toBeNull();
    } finally {
      for (const client of clients) client.close();
      await new Promise((resolve) => io.close(resolve));
    }
  });

  it('a websocket upgrade leaves its response on a close listener, and an error and a headers listener, which can be taken off', async () => {
    const httpServer = createServer();
    const io = new Server(httpServer, { transports: ['websocket'] });
    const found: ReturnType<typeof upgradeResponseCloseListener>[] = [];
    io.engine.use((_req: unknown, res: object, next: () => void) => {
      found.push(upgradeResponseCloseListener(res));
      next();
    });
    await new Promise<void>((resolve) => httpServer.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(httpServer.address() as AddressInfo).port}`;
    const client = connect(url, { transports: ['websocket'], forceNew: true, reconnection: false });
    try {
      const conn = await new Promise<{ transport: EventEmitter & { name: string } }>((resolve) => io.engine.once('connection', resolve));
      // The response's listener, as Engine.IO added it: the TCP socket's last `close` listener then.
      expect(found).toHaveLength(1);
      const { socket, listener } = found[0]!;
      expect(socket.rawListeners('close')).toContain(listener);
      const ws = transportWebSocket(conn.transport) as unknown as EventEmitter;
      expect(ws.listeners('error').map((fn) => fn.name)).toEqual(['onUpgradeError', 'bound onError']);
      expect(conn.transport.listenerCount('headers')).toBe(1);

      releaseUpgradeListeners(conn.transport);
      expect(ws.listeners('error').map((fn) => fn.name)).toEqual(['bound onError']);
      expect(conn.transport.listenerCount('headers')).toBe(0);
    } finally {
      client.close();
      await new Promise((resolve) => io.close(resolve));
    }
  });
});
