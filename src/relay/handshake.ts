import type { Socket } from 'socket.io';
import type { FailureLimited } from '../limits/auth-failure-limiter';
import type { Logger } from '../logging/logger';
import { AGENT_ID_PATTERN, HandshakeCodes, Namespaces, type HandshakeCode, type HandshakeErrorData } from '../protocol';
import type { RelayContext } from './relay.context';

/** A refused handshake; Socket.IO sends `message` and `data` to the client as `connect_error`. */
export class HandshakeError extends Error {
  readonly data: HandshakeErrorData;

  constructor(code: HandshakeCode) {
    super(code);
    this.name = 'HandshakeError';
    this.data = { code, retryable: HandshakeCodes[code].retryable };
  }
}

/** What one handshake learns as its checks run. */
export interface HandshakeAttempt {
  /** The peer's address (behind TRUST_PROXY, the one the proxy reports). */
  ip: string;
  /** Set when the address had spent its failure budget as the handshake began. */
  addressLimited: FailureLimited | null;
  /** Who the credential speaks for once it verified (`sub:…`, `key:…`); failure limits count it too. */
  identity?: string;
}

/** One step of a namespace's handshake checks; throws {@link HandshakeError} to refuse. */
export type HandshakeCheck = (socket: Socket, attempt: HandshakeAttempt) => void | Promise<void>;

/**
 * Refusals that say nothing about the peer's credentials and so do not count as failures. An
 * Origin refusal is one: any web page can make its visitors' browsers send them, and counting
 * them would let that page lock the visitors' address out.
 */
const NOT_A_FAILURE: ReadonlySet<HandshakeCode> = new Set([
  'RATE_LIMITED',
  'SERVER_SHUTTING_DOWN',
  'SERVER_UNAVAILABLE',
  'SERVER_BUSY',
  'ORIGIN_NOT_ALLOWED',
  'AGENT_RUNTIME_LIMIT',
]);

/**
 * Runs `checks` in order as one `namespace.use` middleware. A refusal becomes a `connect_error` with
 * `{ code, retryable }`, counts against the address's failure limit, and the transport is then
 * closed unless another namespace of the same client still uses it, so a refused peer neither
 * lingers nor reaches a `connection` handler.
 */
export function handshakeMiddleware(
  ctx: RelayContext,
  namespace: string,
  checks: HandshakeCheck[],
  describe: (socket: Socket) => Record<string, unknown>,
) {
  return async (socket: Socket, next: (err?: Error) => void): Promise<void> => {
    const { ip } = ctx.connections.of(socket);
    // Before the first await: CONNECTs that arrive together in one write each see the ones before them.
    const limited = ctx.socketGate.admit(ip, socket.conn);
    if (limited) {
      ctx.logger.info({ namespace, reason: limited, ip }, 'handshake refused by the connection limits');
      // No code, like the engine gate's refusals of the same limits: the SDKs retry with backoff.
      next(new Error(limited));
      closeUnusedTransport(ctx, socket);
      return;
    }
    const attempt: HandshakeAttempt = { ip, addressLimited: null };
    try {
      for (const check of checks) await check(socket, attempt);
    } catch (err) {
      ctx.socketGate.release(ip);
      let refusal = err instanceof HandshakeError ? err : internalError(ctx.logger, namespace, err);
      const failure = refusal.data.code;
      if (!NOT_A_FAILURE.has(failure) && (await ctx.authFailures.recordFailure(ip, attempt.identity))) {
        refusal = new HandshakeError('RATE_LIMITED');
      }
      const code = refusal.data.code;
      const auth = socket.handshake.auth as { agentId?: unknown } | undefined;
      const agentId = typeof auth?.agentId === 'string' ? auth.agentId.slice(0, 128) : undefined;
      ctx.metrics.handshakes.inc({ namespace, result: 'rejected', code });
      // `failure` is what the peer got wrong, also when the answer is RATE_LIMITED.
      ctx.logger.info({ namespace, code, ...(failure === code ? {} : { failure }), agentId, ip }, 'handshake rejected');
      ctx.socketGate.settled(socket.conn);
      next(refusal);
      closeUnusedTransport(ctx, socket);
      return;
    }
    ctx.socketGate.settled(socket.conn);
    ctx.metrics.handshakes.inc({ namespace, result: 'accepted', code: '' });
    ctx.logger.info({ namespace, socketId: socket.id, ...describe(socket) }, 'handshake accepted');
    next();
    // Socket.IO connects the socket on the next tick, unless its transport closed meanwhile: then the
    // socket is dropped without a `disconnect`, and its slot must come back here.
    process.nextTick(() => {
      if (!socket.connected) ctx.socketGate.release(ip);
    });
  };
}

/**
 * What every namespace does when one of its accepted sockets ends: gives back its slot under the
 * connection limits, closes a connection left with no namespace, and logs and counts a socket whose
 * transport was closed because its peer stopped reading (MAX_SOCKET_BUFFER_BYTES, MAX_AGENT_SOCKET_BUFFER_BYTES).
 */
export function socketEnded(ctx: RelayContext, socket: Socket, namespace: string, logger: Logger): void {
  ctx.socketGate.release(ctx.connections.of(socket).ip);
  ctx.socketGate.leftNamespace(socket);
  if (ctx.sendBuffers.closedSlow(socket.conn)) {
    ctx.metrics.slowConsumerCloses.inc({ namespace });
    logger.warn({ maxSocketBufferBytes: ctx.sendBuffers.boundOf(socket.conn) }, 'slow consumer closed');
  }
}

/**
 * The default namespace `/` serves nothing, and a socket there would hold its connection open
 * without any credential: every CONNECT to it is refused (`connect_error` without a code, as
 * Socket.IO answers for a namespace that does not exist), and the transport closed unless another
 * namespace uses it.
 */
export function refuseEveryConnection(ctx: RelayContext) {
  return (socket: Socket, next: (err?: Error) => void): void => {
    ctx.metrics.engineRefusals.inc({ reason: 'default namespace' });
    next(new Error(`Invalid namespace: the hub serves ${Namespaces.client} and ${Namespaces.agent} only`));
    closeUnusedTransport(ctx, socket);
  };
}

function internalError(logger: Logger, namespace: string, err: unknown): HandshakeError {
  // A store outage during the checks must not let the peer in; it may retry once we recover.
  logger.error({ err, namespace }, 'handshake check failed');
  return new HandshakeError('SERVER_UNAVAILABLE');
}

/**
 * Closes the transport of a refused socket unless another namespace of the connection uses it or
 * another handshake on it is still under way (it closes the transport if it fails in turn).
 */
function closeUnusedTransport(ctx: RelayContext, socket: Socket): void {
  const client = socket.client as unknown as { sockets: Map<string, unknown>; nsps: Map<string, unknown> };
  // The error packet is queued before this runs; engine.io flushes its write buffer before closing.
  setImmediate(() => {
    if (client.sockets.size === 0 && client.nsps.size === 0 && !ctx.socketGate.handshaking(socket.conn)) socket.conn.close();
  });
}

/**
 * Keeps only the protocol's `fields` of the handshake `auth` (the namespace's auth schema): Socket.IO
 * holds `socket.handshake.auth` for the socket's life, so anything else a peer sends (100 KB of
 * junk, say) would stay in memory as long as the connection.
 */
export function keepAuthFields(schema: { properties: Record<string, unknown> }): HandshakeCheck {
  const fields = Object.keys(schema.properties);
  return (socket) => {
    const sent: unknown = socket.handshake.auth;
    const kept: Record<string, unknown> = {};
    if (typeof sent === 'object' && sent !== null) {
      for (const field of fields) if (Object.hasOwn(sent, field)) kept[field] = (sent as Record<string, unknown>)[field];
    }
    socket.handshake.auth = kept;
  };
}

/** What a released handshake's `headers` and `query` are: one frozen empty object for all sockets. */
const RELEASED: Readonly<Record<string, never>> = Object.freeze({});

/**
 * Lets go of the two empty objects Socket.IO keeps per socket in `socket.handshake` as its `headers`
 * and `query`: the HTTP request is let go before Socket.IO builds the handshake (the client address
 * and Origin are in the connection registry, src/net/connection-info.ts), so they hold nothing.
 * Both become the same frozen empty object. `auth` stays, cut to the protocol's fields
 * ({@link keepAuthFields}).
 */
export function releaseHandshake(socket: Socket): void {
  const { handshake } = socket;
  handshake.headers = RELEASED;
  handshake.query = RELEASED;
}

/** Refuses handshakes while this replica drains, so the peer retries on another replica. */
export function notDraining(ctx: RelayContext): HandshakeCheck {
  return () => {
    if (ctx.isDraining()) throw new HandshakeError('SERVER_SHUTTING_DOWN');
  };
}

/**
 * Refuses new sessions while this replica is past its memory high-water mark (MEMORY_HIGH_WATER_RATIO),
 * so the peer retries on another replica before this one runs out of memory; sessions it holds stay.
 */
export function memoryBelowHighWater(ctx: RelayContext): HandshakeCheck {
  return () => {
    if (ctx.memory.overHighWater) throw new HandshakeError('SERVER_BUSY');
  };
}

/**
 * Refuses client sessions while this replica's subscriptions are being restored: replies published
 * meanwhile would pass it by, and a session that then got later ones live would never have them
 * replayed. The client retries, here or on another replica.
 */
export function subscriptionsIntact(ctx: RelayContext): HandshakeCheck {
  return () => {
    if (!ctx.subscriptionsIntact()) throw new HandshakeError('SERVER_UNAVAILABLE');
  };
}

/**
 * Notes whether the address spent its failure budget this minute. Nothing is refused yet: a
 * credential that verifies may still get in (see {@link verifiedUnderFailureLimit}); one that does
 * not gets RATE_LIMITED when its failure is counted.
 */
export function readFailureBudget(ctx: RelayContext): HandshakeCheck {
  return async (_socket, attempt) => {
    attempt.addressLimited = await ctx.authFailures.addressLimited(attempt.ip);
  };
}

/**
 * After the credential check: from an address that spent its budget, a verified credential gets
 * in unless its own identity spent its budget from that address too.
 */
export function verifiedUnderFailureLimit(ctx: RelayContext): HandshakeCheck {
  return async (_socket, attempt) => {
    if (!attempt.addressLimited) return;
    if (attempt.identity === undefined || (await ctx.authFailures.identityLimited(attempt.ip, attempt.identity))) {
      throw new HandshakeError('RATE_LIMITED');
    }
  };
}

/** Returns a valid agentId or throws AGENT_ID_REQUIRED / AGENT_ID_INVALID. */
export function checkAgentId(agentId: unknown): string {
  if (agentId === undefined || agentId === null || agentId === '') throw new HandshakeError('AGENT_ID_REQUIRED');
  if (typeof agentId !== 'string' || !AGENT_ID_PATTERN.test(agentId)) throw new HandshakeError('AGENT_ID_INVALID');
  return agentId;
}
