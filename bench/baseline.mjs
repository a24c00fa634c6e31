// The baseline relay the hub is measured against: the same stack (Socket.IO 4, the same Redis
// adapter in cluster mode) and the same wire protocol as the hub, with nothing else: no
// authentication, no validation, no dedupe, no presence, no logging, no metrics.
//
// Environment: PORT (0 = any; the chosen port is printed as `listening <port>`), HOST, REDIS_URL
// (unset = one replica), ADAPTER (`sharded`, like the hub, or `classic`).
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { createAdapter, createShardedAdapter } from '@socket.io/redis-adapter';
import Redis from 'ioredis';
import { Server } from 'socket.io';

const MAX_MESSAGE_BYTES = 65536;
const ACK_TIMEOUT_MS = 10_000;

const httpServer = createServer((_req, res) => res.end('ok'));
const io = new Server(httpServer, {
  transports: ['websocket', 'polling'],
  serveClient: false,
  maxHttpBufferSize: 2 * MAX_MESSAGE_BYTES,
});

const redisUrl = process.env.REDIS_URL;
if (redisUrl) {
  const pub = new Redis(redisUrl);
  const sub = pub.duplicate();
  io.adapter(
    process.env.ADAPTER === 'classic'
      ? createAdapter(pub, sub)
      : createShardedAdapter(pub, sub, { subscriptionMode: 'dynamic' }),
  );
}

const agents = io.of('/ws/agent');
const clients = io.of('/ws/client');

agents.on('connection', (socket) => {
  const { agentId } = socket.handshake.auth;
  socket.join(`runtimes:${agentId}`);
  socket.on('reply', (reply, ack) => {
    const now = new Date();
    clients.to(`client:${agentId}:${reply.to}`).emit('message', { id: randomUUID(), ts: now.toISOString(), agentId, text: reply.text });
    if (typeof ack === 'function') ack({ ok: true });
  });
});

clients.on('connection', (socket) => {
  const { agentId, sub } = socket.handshake.auth;
  const clientId = sub ?? socket.id;
  socket.join(`client:${agentId}:${clientId}`);
  socket.on('message', async (payload, ack) => {
    const id = randomUUID();
    const ts = new Date().toISOString();
    const message = { id, ts, agentId, from: clientId, text: payload.text };
    try {
      const acks = await agents.to(`runtimes:${agentId}`).timeout(ACK_TIMEOUT_MS).emitWithAck('message', message);
      ack(acks.length > 0 ? { ok: true, id, ts } : { ok: false, error: { code: 'AGENT_OFFLINE' } });
    } catch {
      ack({ ok: false, error: { code: 'TIMEOUT' } });
    }
  });
});

httpServer.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? '127.0.0.1', () => {
  process.stdout.write(`listening ${httpServer.address().port}\n`);
});
process.on('SIGTERM', () => process.exit(0));
