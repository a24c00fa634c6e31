import { Writable } from 'node:stream';
import { io as connect, type Socket } from 'socket.io-client';
import { configFrom, type ConfigKey, type HubConfig } from '../../src/config/config';
import { createHub, type Hub } from '../../src/hub/hub';
import { createLogger } from '../../src/logging/logger';
import { Namespaces, type HandshakeErrorData } from '../../src/protocol';
import { RelayAgent } from '../../src/sdk/agent';
import { mintToken, TEST_ADMIN_JWT_SECRET, TEST_AGENT_KEY, TEST_JWT_SECRET, type TokenClaims } from './tokens';

export interface TestHub {
  hub: Hub;
  config: HubConfig;
  url: string;
  /** Connects an agent runtime with the SDK and waits for the handshake. */
  agent(agentId: string): Promise<RelayAgent>;
  /** Connects a raw client socket and waits for `connect`. */
  client(agentId: string, claims?: TokenClaims | string, extra?: ClientOptions): Promise<Socket>;
  close(): Promise<void>;
}

export interface ClientOptions {
  origin?: string;
  transports?: ('websocket' | 'polling')[];
  /** Extra request headers (X-Forwarded-For, say). */
  headers?: Record<string, string>;
}

export interface StartHubOptions {
  /** Collects the hub's log lines (JSON strings) at LOG_LEVEL instead of writing them to stdout. */
  logLines?: string[];
}

/** A real hub on 127.0.0.1, port 0, with fixed test secrets and silent logs. */
export async function startHub(overrides: Partial<Record<ConfigKey, string>> = {}, options: StartHubOptions = {}): Promise<TestHub> {
  const config = configFrom({
    NODE_ENV: 'test',
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'silent',
    JWT_SECRET: TEST_JWT_SECRET,
    ADMIN_JWT_SECRET: TEST_ADMIN_JWT_SECRET,
    AGENT_API_KEYS: TEST_AGENT_KEY,
    DEMO_ENABLED: 'false',
    ...overrides,
  });
  const { logLines } = options;
  const sink = logLines
    ? new Writable({
        write(chunk: Buffer, _encoding, done) {
          logLines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
          done();
        },
      })
    : undefined;
  const hub = await createHub(config, { logger: createLogger(config.LOG_LEVEL, sink) });
  const url = `http://127.0.0.1:${await hub.listen(0, '127.0.0.1')}`;
  const sockets: Socket[] = [];
  const agents: RelayAgent[] = [];

  return {
    hub,
    config,
    url,
    async agent(agentId) {
      const agent = new RelayAgent({ url, apiKey: TEST_AGENT_KEY, agentId });
      agents.push(agent);
      await agent.connect();
      return agent;
    },
    async client(agentId, claims = { sub: 'user-1' }, extra = {}) {
      const token = typeof claims === 'string' ? claims : mintToken(claims);
      const socket = clientSocket(url, { token, agentId }, extra);
      sockets.push(socket);
      await connected(socket);
      return socket;
    },
    async close() {
      for (const s of sockets) s.disconnect();
      for (const a of agents) a.close();
      await hub.close();
    },
  };
}

/** A client socket that does not connect until `.connect()` and never reconnects by itself. */
export function clientSocket(url: string, auth: Record<string, unknown>, extra: ClientOptions = {}): Socket {
  return connect(`${url}${Namespaces.client}`, {
    transports: extra.transports ?? ['websocket'],
    forceNew: true,
    reconnection: false,
    auth,
    extraHeaders: { ...extra.headers, ...(extra.origin ? { origin: extra.origin } : {}) },
  });
}

export function agentSocket(url: string, auth: Record<string, unknown>): Socket {
  return connect(`${url}${Namespaces.agent}`, { transports: ['websocket'], forceNew: true, reconnection: false, auth });
}

/** Resolves on `connect`, rejects with the `connect_error` (carrying `data`). */
export function connected(socket: Socket): Promise<Socket> {
  return new Promise((resolve, reject) => {
    socket.once('connect', () => resolve(socket));
    socket.once('connect_error', reject);
    if (!socket.connected && !socket.active) socket.connect();
  });
}

/** Resolves with the `err.data` of the refused handshake; fails if the socket connects. */
export async function refusal(socket: Socket): Promise<HandshakeErrorData> {
  try {
    await connected(socket);
  } catch (err) {
    return (err as { data: HandshakeErrorData }).data;
  } finally {
    socket.disconnect();
  }
  throw new Error('expected the handshake to be refused, but it was accepted');
}

/** Resolves with the next `event` payload on `socket`. */
export function nextEvent<T = unknown>(socket: Socket, event: string): Promise<T> {
  return new Promise((resolve) => socket.once(event, (payload: T) => resolve(payload)));
}
