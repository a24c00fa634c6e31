// The baseline relay the hub is measured against: the same stack (Socket.IO 4, the same Redis
// adapter in cluster mode) and the same wire protocol as the hub, and what any production relay
// must do at the least: client JWTs verified in the handshake (HS256, like the hub's default) and
// every message acknowledged by the runtime before the client's ack; streamed replies forwarded as
// they come (stream:start / delta / end to message:start / delta / end, with a seq per stream).
// Nothing else: no validation, no dedupe, no presence, no logging, no metrics, no resume.
//
// Environment: PORT (0 = any; the chosen port is printed as `listening <port>`), HOST, REDIS_URL
// (unset = one replica), ADAPTER (`sharded`, like the hub, or `classic`), JWT_SECRET.
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { createAdapter, createShardedAdapter } from '@socket.io/redis-adapter';
import Redis from 'ioredis';
import jwt from 'jsonwebtoken';
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
  io.adapter(process.env.ADAPTER === 'classic' ? createAdapter(pub, sub) : createShardedAdapter(pub, sub, { subscriptionMode: 'dynamic' }));
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
  // Open streams of this runtime socket: id → { room, seq }.
  const streams = new Map();
  socket.on('stream:start', (start, ack) => {
    const id = randomUUID();
    const ts = new Date().toISOString();
    const room = `client:${agentId}:${start.to}`;
    streams.set(id, { room, seq: 0 });
    clients.to(room).emit('message:start', { id, ts, agentId, author: 'agent', text: '', seq: 0 });
    if (typeof ack === 'function') ack({ ok: true, id, ts });
  });
  socket.on('stream:delta', (delta, ack) => {
    const stream = streams.get(delta.id);
    if (!stream) return typeof ack === 'function' && ack({ ok: false, error: { code: 'STREAM_NOT_FOUND' } });
    const seq = ++stream.seq;
    clients.to(stream.room).emit('message:delta', { id: delta.id, seq, text: delta.text });
    if (typeof ack === 'function') ack({ ok: true, seq });
  });
  socket.on('stream:end', (end, ack) => {
    const stream = streams.get(end.id);
    streams.delete(end.id);
    const ts = new Date().toISOString();
    if (stream)
      clients.to(stream.room).emit('message:end', { id: end.id, ts, agentId, author: 'agent', text: end.text ?? '', status: 'complete' });
    if (typeof ack === 'function') ack(stream ? { ok: true, id: end.id, ts } : { ok: false, error: { code: 'STREAM_NOT_FOUND' } });
  });
});

const secret = process.env.JWT_SECRET;
clients.use((socket, next) => {
  try {
    const claims = jwt.verify(socket.handshake.auth.token, secret, { algorithms: ['HS256'] });
    socket.data.sub = claims.sub;
    next();
  } catch {
    next(Object.assign(new Error('TOKEN_INVALID'), { data: { code: 'TOKEN_INVALID', retryable: false } }));
  }
});

clients.on('connection', (socket) => {
  const { agentId } = socket.handshake.auth;
  const clientId = socket.data.sub;
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
