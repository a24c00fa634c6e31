// Relay peers for the container tier and the polling check of the local cluster: raw socket.io-client
// sockets speaking the relay protocol, with nothing from src/ (these tiers treat the hub as a black
// box: the built image or dist/main.js, configured through its documented environment).
import { randomBytes, randomUUID } from 'node:crypto';
import type { Agent } from 'node:http';
import jwt from 'jsonwebtoken';
import { io, type ManagerOptions, type Socket, type SocketOptions } from 'socket.io-client';
import { sleep } from '../../helpers/wait';

export type Ack = { ok: true; id: string; ts: string } | { ok: false; error: { code: string; message?: string } };
export type Delivery = { id: string; ts: string; agentId: string; from: string; text: string };
export type ClientMessage = { id: string; ts: string; agentId: string; text: string; replyTo?: string };

/** Fresh production secrets for a hub under test: a JWT secret, a separate admin one, one agent key. */
export function hubSecrets(): { JWT_SECRET: string; ADMIN_JWT_SECRET: string; AGENT_API_KEYS: string } {
  return {
    JWT_SECRET: randomBytes(36).toString('base64url'),
    ADMIN_JWT_SECRET: randomBytes(36).toString('base64url'),
    AGENT_API_KEYS: `ak_${randomBytes(24).toString('hex')}`,
  };
}

/** An HS256 chat token with `sub` and `exp`, as an integrator's backend signs it with JWT_SECRET. */
export function chatToken(secret: string, sub: string, ttlSeconds = 3600): string {
  return jwt.sign({ sub }, secret, { algorithm: 'HS256', expiresIn: ttlSeconds });
}

type ConnectOptions = {
  /** Default: the SDKs' way (websocket only, no reconnection). `default` = socket.io-client's defaults. */
  transport?: 'websocket' | 'default';
  reconnection?: boolean;
  /** An http.Agent (e.g. with a localAddress) for both Engine.IO transports. */
  agent?: Agent;
  timeoutMs?: number;
};

function socketOptions(auth: object, options: ConnectOptions): Partial<ManagerOptions & SocketOptions> {
  return {
    auth,
    forceNew: true,
    reconnection: options.reconnection ?? false,
    reconnectionDelay: 200,
    reconnectionDelayMax: 1000,
    ...(options.transport === 'default' ? {} : { transports: ['websocket'] }),
    ...(options.agent ? { agent: options.agent as unknown as string } : {}),
  };
}

/** Resolves once `socket` connects (and `ready` fired, when given); rejects on connect_error with its data. */
function connected(socket: Socket, ready: string | undefined, timeoutMs: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => fail(new Error(`no ${ready ?? 'connect'} within ${timeoutMs} ms`)), timeoutMs);
    const fail = (err: Error) => {
      clearTimeout(timer);
      socket.close();
      reject(err);
    };
    socket.once('connect_error', (err: Error & { data?: unknown }) =>
      fail(new Error(`connect_error ${err.message} ${JSON.stringify(err.data ?? null)}`)),
    );
    const done = () => {
      clearTimeout(timer);
      socket.off('connect_error');
      resolve(socket);
    };
    if (ready) socket.once(ready, done);
    else socket.once('connect', done);
  });
}

/**
 * An agent runtime on `/ws/agent` that acks every delivery at once and keeps what it received.
 * `echo` makes it reply to each message with `echo:<text>`.
 */
export async function connectAgent(url: string, apiKey: string, agentId: string, options: ConnectOptions & { echo?: boolean } = {}) {
  const socket = io(`${url}/ws/agent`, socketOptions({ apiKey, agentId }, options));
  const received: Delivery[] = [];
  socket.on('message', (message: Delivery, ack?: (a: unknown) => void) => {
    ack?.({ ok: true });
    received.push(message);
    if (options.echo) {
      socket.timeout(10_000).emit('reply', { to: message.from, text: `echo:${message.text}`, replyTo: message.id }, () => undefined);
    }
  });
  await connected(socket, undefined, options.timeoutMs ?? 10_000);
  return { socket, received };
}

export type ChatClient = Awaited<ReturnType<typeof connectClient>>;

/** A chat client on `/ws/client`; resolves on the hub's `session` event. */
export async function connectClient(url: string, token: string, agentId: string, options: ConnectOptions = {}) {
  const socket = io(`${url}/ws/client`, socketOptions({ token, agentId }, options));
  const received: ClientMessage[] = [];
  // Engine.IO transports in the order this client used them, and failed upgrades.
  const transports: string[] = [];
  const upgradeErrors: string[] = [];
  socket.io.on('open', () => {
    const engine = socket.io.engine;
    transports.push(engine.transport.name);
    engine.on('upgrade', (transport: { name: string }) => transports.push(transport.name));
    engine.on('upgradeError', (err: Error) => upgradeErrors.push(err.message));
  });
  const waiters = new Set<() => void>();
  socket.on('message', (m: ClientMessage) => {
    received.push(m);
    waiters.forEach((w) => w());
  });
  await connected(socket, 'session', options.timeoutMs ?? 10_000);
  // After the first session, a client that reconnects follows the protocol's rule for refusals: a
  // retryable code (a replica restoring its Redis subscription answers SERVER_UNAVAILABLE) is tried
  // again, as the SDKs do; Socket.IO itself does not retry a refusal.
  if (options.reconnection) {
    socket.on('connect_error', (err: Error & { data?: { retryable?: boolean } }) => {
      if (err.data?.retryable) setTimeout(() => socket.connect(), 500);
    });
  }
  return {
    socket,
    received,
    transports,
    upgradeErrors,
    /** Resolves once the Engine.IO session runs on a websocket (at once when it already does). */
    async upgraded(timeoutMs = 10_000): Promise<void> {
      const engine = socket.io.engine;
      if (engine.transport.name === 'websocket') return;
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no upgrade within ${timeoutMs} ms (${upgradeErrors.join('; ')})`)), timeoutMs);
        engine.once('upgrade', () => {
          clearTimeout(timer);
          resolve();
        });
      });
    },
    /** Sends a message; resolves with the hub's ack (an error ack is a value, a timeout rejects). */
    send(text: string, clientMessageId: string = randomUUID(), timeoutMs = 15_000): Promise<Ack> {
      return socket.timeout(timeoutMs).emitWithAck('message', { clientMessageId, text });
    },
    /** Resolves with the first received message matching `match` (already received counts). */
    waitFor(match: (m: ClientMessage) => boolean, timeoutMs = 15_000): Promise<ClientMessage> {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = received.find(match);
          if (!found) return false;
          clearTimeout(timer);
          waiters.delete(check);
          resolve(found);
          return true;
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no matching message within ${timeoutMs} ms (got ${received.length})`));
        }, timeoutMs);
        if (!check()) waiters.add(check);
      });
    },
  };
}

/** The hub's default MESSAGE_RATE_PER_S: what one client socket may send per second, sustained. */
const CLIENT_RATE_PER_S = 20;

/**
 * `count` round trips client → agent → client on `clients` in turn: each message must be acked ok
 * and its echo must come back with `replyTo` = the message id. Returns the acked ids. Each socket
 * sends at most at the hub's default rate limit, as a user's would: a round trip through a fast
 * stack takes a few ms, and a socket sending faster than that gets RATE_LIMITED once its burst is
 * spent, however many round trips the hub could carry.
 */
export async function roundTrips(clients: ChatClient[], count: number, label = 'rt'): Promise<string[]> {
  const ids: string[] = [];
  const sentAt = new Map<ChatClient, number>();
  for (let i = 0; i < count; i++) {
    const client = clients[i % clients.length];
    const text = `${label}-${i}`;
    const due = (sentAt.get(client) ?? 0) + 1000 / CLIENT_RATE_PER_S - Date.now();
    if (due > 0) await sleep(due);
    sentAt.set(client, Date.now());
    const ack = await client.send(text);
    if (!ack.ok) throw new Error(`round trip ${i}: error ack ${JSON.stringify(ack)}`);
    ids.push(ack.id);
    await client.waitFor((m) => m.replyTo === ack.id && m.text === `echo:${text}`);
  }
  return ids;
}

/** Resolves on the socket's next `connect` (a reconnection), or rejects after `timeoutMs`. */
export function reconnected(socket: Socket, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no reconnect within ${timeoutMs} ms`)), timeoutMs);
    socket.once('connect', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}
