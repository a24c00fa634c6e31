import type { Socket } from 'socket.io';
import type { Logger } from '../logging/logger';
import { connectionInfo } from './connection-info';
import { HandshakeCodes, type HandshakeCode, type HandshakeErrorData } from './protocol';
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

/** One step of a namespace's handshake checks; throws {@link HandshakeError} to refuse. */
export type HandshakeCheck = (socket: Socket) => void | Promise<void>;

/** Refusals that say nothing about the peer's credentials and so do not count as failures. */
const NOT_A_FAILURE: ReadonlySet<HandshakeCode> = new Set(['RATE_LIMITED', 'SERVER_SHUTTING_DOWN', 'SERVER_UNAVAILABLE']);

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
    try {
      for (const check of checks) await check(socket);
    } catch (err) {
      let refusal = err instanceof HandshakeError ? err : internalError(ctx.logger, namespace, err);
      const failure = refusal.data.code;
      const { ip } = connectionInfo(socket);
      if (!NOT_A_FAILURE.has(failure) && (await ctx.authFailures.recordFailure(ip))) {
        refusal = new HandshakeError('RATE_LIMITED');
      }
      const code = refusal.data.code;
      const auth = socket.handshake.auth as { agentId?: unknown } | undefined;
      const agentId = typeof auth?.agentId === 'string' ? auth.agentId.slice(0, 128) : undefined;
      ctx.metrics.handshakes.inc({ namespace, result: 'rejected', code });
      // `failure` is what the peer got wrong, also when the answer is RATE_LIMITED.
      ctx.logger.info({ namespace, code, ...(failure === code ? {} : { failure }), agentId, ip }, 'handshake rejected');
      next(refusal);
      closeUnusedTransport(socket);
      return;
    }
    ctx.metrics.handshakes.inc({ namespace, result: 'accepted', code: '' });
    ctx.logger.info({ namespace, socketId: socket.id, ...describe(socket) }, 'handshake accepted');
    next();
  };
}

function internalError(logger: Logger, namespace: string, err: unknown): HandshakeError {
  // A store outage during the checks must not let the peer in; it may retry once we recover.
  logger.error({ err, namespace }, 'handshake check failed');
  return new HandshakeError('SERVER_UNAVAILABLE');
}

function closeUnusedTransport(socket: Socket): void {
  const client = socket.client as unknown as { sockets: Map<string, unknown>; nsps: Map<string, unknown> };
  // The error packet is queued before this runs; engine.io flushes its write buffer before closing.
  setImmediate(() => {
    if (client.sockets.size === 0 && client.nsps.size === 0) socket.conn.close();
  });
}

/** Refuses handshakes while this replica drains, so the peer retries on another replica. */
export function notDraining(ctx: RelayContext): HandshakeCheck {
  return () => {
    if (ctx.isDraining()) throw new HandshakeError('SERVER_SHUTTING_DOWN');
  };
}

/** Refuses an address that failed too many handshakes this minute. */
export function underFailureLimit(ctx: RelayContext): HandshakeCheck {
  return (socket) => ctx.authFailures.check(connectionInfo(socket).ip);
}
