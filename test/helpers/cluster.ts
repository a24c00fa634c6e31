import { readFileSync } from 'node:fs';
import { io as connect, type Socket } from 'socket.io-client';
import { startCluster, type ClusterHandle } from '../../deploy/cluster.cjs';
import { configFrom } from '../../src/config/config';
import { createHub, type Hub } from '../../src/hub/hub';
import { createLogger } from '../../src/logging/logger';
import { Namespaces } from '../../src/protocol';
import { RelayAgent } from '../../src/sdk/agent';
import { RelayChat } from '../../sdk/browser/src';
import { mintToken, type TokenClaims } from './tokens';

/**
 * Hub settings of cluster tests: short presence TTL and ack timeout so expiry and failover happen
 * within a test, a short grace period, and quiet logs.
 */
export const CLUSTER_TEST_ENV = {
  LOG_LEVEL: 'warn',
  PRESENCE_TTL_S: '3',
  AGENT_ACK_TIMEOUT_MS: '3000',
  SHUTDOWN_GRACE_MS: '4000',
  DEMO_ENABLED: 'false',
  AGENT_RECONNECT_GRACE_MS: '1500',
};

export interface TestCluster {
  handle: ClusterHandle;
  /** nginx origin. */
  url: string;
  token(claims?: TokenClaims): string;
  /** An agent runtime (agent SDK, reconnects on its own) connected to `url`. */
  agent(url: string, agentId: string): Promise<RelayAgent>;
  /** A browser-SDK chat (own reconnect loop and outbox) connected to `url`. */
  chat(url: string, agentId: string, claims?: TokenClaims): Promise<RelayChat>;
  /**
   * A raw client socket without reconnection, connected to `url`; resolves on `session`, the hub's
   * sign that the socket's rooms and presence are in place.
   */
  socket(url: string, agentId: string, claims?: TokenClaims): Promise<Socket>;
  /** A hub in this process on the cluster's Redis: a fourth replica whose services tests can call. */
  inProcessHub(): Promise<Hub>;
  /** Closes every peer, in-process hub and process this cluster started. */
  close(): Promise<void>;
}

export async function startTestCluster(env: Record<string, string> = {}, replicas = 3): Promise<TestCluster> {
  const handle = await startCluster({ replicas, env: { ...CLUSTER_TEST_ENV, ...env } });
  const closers: (() => Promise<void> | void)[] = [];
  const token = (claims: TokenClaims = { sub: 'user-1' }) => mintToken(claims, handle.secrets.JWT_SECRET);

  return {
    handle,
    url: handle.url,
    token,
    async agent(url, agentId) {
      const agent = new RelayAgent({ url, apiKey: handle.secrets.AGENT_API_KEYS, agentId, backoff: { baseMs: 100, capMs: 500 } });
      agent.on('error', () => {});
      closers.push(() => agent.close());
      await agent.connect();
      return agent;
    },
    async chat(url, agentId, claims) {
      const chat = new RelayChat({
        url,
        agentId,
        token: () => Promise.resolve(token(claims)),
        backoff: { baseMs: 100, capMs: 500 },
        ackTimeoutMs: 10_000,
      });
      chat.on('error', () => {});
      closers.push(() => chat.close());
      await new Promise<void>((resolve) => {
        const onState = ({ state }: { state: string }) => {
          if (state !== 'connected') return;
          chat.off('state', onState);
          resolve();
        };
        chat.on('state', onState);
      });
      return chat;
    },
    async socket(url, agentId, claims) {
      const socket = connect(`${url}${Namespaces.client}`, {
        transports: ['websocket'],
        forceNew: true,
        reconnection: false,
        auth: { token: token(claims), agentId },
      });
      closers.push(() => void socket.disconnect());
      await new Promise<void>((resolve, reject) => {
        socket.once('session', () => resolve());
        socket.once('connect_error', reject);
      });
      return socket;
    },
    async inProcessHub() {
      const config = configFrom({
        NODE_ENV: 'test',
        PORT: '0',
        HOST: '127.0.0.1',
        LOG_LEVEL: 'silent',
        DEMO_ENABLED: 'false',
        REDIS_URL: handle.redis.url,
        JWT_SECRET: handle.secrets.JWT_SECRET,
        AGENT_API_KEYS: handle.secrets.AGENT_API_KEYS,
        PRESENCE_TTL_S: CLUSTER_TEST_ENV.PRESENCE_TTL_S,
      });
      const hub = await createHub(config, { logger: createLogger('silent') });
      closers.push(() => hub.close());
      await hub.start();
      return hub;
    },
    async close() {
      for (const close of closers.reverse()) await close();
      await handle.stop();
    },
  };
}

/** Kept for branches in flight that import it from here: the helper is ./wait's `waitFor`. */
export { waitFor } from './wait';

/** GET /health/ready of one replica: true on 200, false on anything else or no answer. */
export async function isReady(url: string): Promise<boolean> {
  try {
    const res = await fetch(`${url}/health/ready`, { signal: AbortSignal.timeout(2000) });
    return res.status === 200;
  } catch {
    return false;
  }
}

/** Collects every `event` payload of an emitter-like source. */
export function collect<T>(source: { on(event: string, fn: (payload: T) => void): unknown }, event: string): T[] {
  const seen: T[] = [];
  source.on(event, (payload: T) => seen.push(payload));
  return seen;
}

export interface SendOutcome {
  sentAt: number;
  /** The hub's ack, or `no-ack` when none came within the client's timeout. */
  ack: { ok: true; id: string } | { ok: false; error: { code: string } } | 'no-ack';
}

/**
 * Sends a message from every connected socket every `intervalMs` (new clientMessageId each time)
 * and records each outcome, until stopped; `stop()` resolves once every send has its outcome. A
 * send whose socket the hub disconnects before the ack has no outcome: it is counted in `ended()`
 * (a client resends such a message with its clientMessageId after reconnecting).
 */
export function startTraffic(
  sockets: Socket[],
  intervalMs: number,
): { outcomes: SendOutcome[]; ended(): number; stop(): Promise<SendOutcome[]> } {
  const outcomes: SendOutcome[] = [];
  const inFlight = new Set<Promise<void>>();
  let n = 0;
  let ended = 0;
  const timer = setInterval(() => {
    for (const socket of sockets) {
      if (!socket.connected) continue;
      const sentAt = Date.now();
      const id = `t${++n}`;
      let onDisconnect: () => void = () => {};
      const disconnected = new Promise<'ended'>((resolve) => (onDisconnect = () => resolve('ended')));
      socket.once('disconnect', onDisconnect);
      const p = Promise.race([socket.timeout(15_000).emitWithAck('message', { clientMessageId: id, text: id }), disconnected])
        .then(
          (ack: SendOutcome['ack'] | 'ended') => void (ack === 'ended' ? ended++ : outcomes.push({ sentAt, ack })),
          () => void outcomes.push({ sentAt, ack: 'no-ack' }),
        )
        .finally(() => socket.off('disconnect', onDisconnect));
      inFlight.add(p);
      void p.finally(() => inFlight.delete(p));
    }
  }, intervalMs);
  return {
    outcomes,
    ended: () => ended,
    async stop() {
      clearInterval(timer);
      await Promise.all([...inFlight]);
      return outcomes;
    },
  };
}

/**
 * After a Redis outage each replica ends its client sessions with `session:closed`
 * SERVER_UNAVAILABLE once its subscriptions are back (what was published in between passed it by):
 * resolves with the code each socket got, once every socket is connected again, reconnected the way
 * a client does (the SDKs do it themselves and resume from the last message they saw). As the SDKs
 * do, a retryable refusal is tried again: a replica whose subscriber is back before its command
 * connection cannot check the handshake yet. A refusal that is not retryable resolves as
 * `refused <code>`.
 */
export function reconnectAfterSessionsEnd(sockets: Socket[]): Promise<(string | undefined)[]> {
  return Promise.all(
    sockets.map(
      (socket) =>
        new Promise<string | undefined>((resolve) => {
          let code: string | undefined;
          socket.once('session:closed', (info: { code: string }) => (code = info.code));
          socket.once('disconnect', () => {
            const refused = (err: Error & { data?: { code?: string; retryable?: boolean } }) => {
              if (err.data?.retryable) setTimeout(() => socket.connect(), 100);
              else {
                socket.off('connect_error', refused);
                resolve(`refused ${err.data?.code ?? err.message}`);
              }
            };
            socket.on('connect_error', refused);
            socket.once('session', () => {
              socket.off('connect_error', refused);
              resolve(code);
            });
            socket.connect();
          });
        }),
    ),
  );
}

/** Resident set size of a process in bytes (Linux /proc). */
export function rssBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = /VmRSS:\s+(\d+) kB/.exec(status);
  if (!kb) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(kb[1]) * 1024;
}

/** Connected sockets per namespace on one replica, from its /metrics. */
export async function connectionsOn(url: string): Promise<{ agents: number; clients: number }> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const gauge = (nsp: string) => Number(new RegExp(`relay_connections\\{namespace="${nsp}"\\} (\\d+)`).exec(text)?.[1] ?? 0);
  return { agents: gauge('/ws/agent'), clients: gauge('/ws/client') };
}
