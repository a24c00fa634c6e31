import type { Socket } from 'socket.io';
import type { TokenBucket } from '../limits/token-bucket';
import type { Logger } from '../logging/logger';
import type { ThrottledLog } from '../logging/throttled-log';
import type { HubMetrics, Tally } from '../metrics/metrics';
import { errorAck, type AckCode } from '../protocol';

type Ack = (response: unknown) => void;

/** The per-event half of a guard: the same for every socket of a namespace, so build it once. */
export interface GuardedEvent<T> {
  event: string;
  /** Refused events in a row after which the socket is disconnected. */
  maxStrikes: number;
  /** Checks the payload; its `explain`, when it has one, says why a payload failed (sent as the ack's message). */
  validate: ((payload: unknown) => payload is T) & { explain?(payload: unknown): string | undefined };
  metrics: HubMetrics;
  /** The count of this event's ok acks, bound on the first one. */
  okAcks?: Tally;
  /**
   * Where handler failures are logged. They are mostly shared state being unreachable; while Redis
   * is down every event fails the same way, so one bounded-rate log per hub.
   */
  failures: ThrottledLog;
}

/** A payload check that takes anything: for events refused whatever they carry. */
export function anyPayload(_payload: unknown): _payload is unknown {
  return true;
}

/** The per-socket half of a guard. */
export interface GuardedSocket {
  socket: Socket;
  /** The socket's rate limit (a getter may create it on first use). */
  readonly bucket: TokenBucket;
  /** A logger bound to the socket (a getter may create it for each use). */
  readonly logger: Logger;
  /** Runs when a rate-limited socket is cut off, before the disconnect. */
  onAbuse(): void;
}

export type GuardOptions<T> = GuardedEvent<T> & GuardedSocket;

/**
 * Wraps an inbound event handler: rate limit, schema validation, and a catch-all, so bad input gets
 * an error ack (or is dropped and counted when no ack callback was given) and never throws into
 * Socket.IO or touches other connections.
 */
export function guardEvent<T>(options: GuardOptions<T>, handle: (payload: T) => unknown) {
  return (...args: unknown[]): Promise<void> => runGuarded(options, options, args, handle);
}

/**
 * {@link guardEvent} for one call: `args` as Socket.IO passed them to the listener. Lets a
 * namespace share one {@link GuardedEvent} among all its sockets instead of building a guard per
 * socket.
 */
export async function runGuarded<T>(
  spec: GuardedEvent<T>,
  target: GuardedSocket,
  args: unknown[],
  handle: (payload: T) => unknown,
): Promise<void> {
  const { event, metrics } = spec;
  // Socket.IO passes the ack callback last, whatever the peer sent before it: `emit(event, ack)`
  // or `emit(event, payload, extra, ack)` must still get their error ack, not a silent timeout.
  const last = args[args.length - 1];
  const ack = typeof last === 'function' ? (last as Ack) : undefined;
  const payload = ack && args.length === 1 ? undefined : args[0];

  const bucket = target.bucket;
  if (!bucket.take()) {
    metrics.rateLimited.inc({ scope: 'socket' });
    refuse(spec, ack, 'RATE_LIMITED');
    if (bucket.strikes >= spec.maxStrikes) {
      target.logger.warn({ event, strikes: bucket.strikes }, 'socket kept sending while rate limited; disconnecting');
      target.onAbuse();
      target.socket.disconnect();
    }
    return;
  }
  if (!spec.validate(payload)) return refuse(spec, ack, 'INVALID_PAYLOAD', spec.validate.explain?.(payload));
  try {
    const response = (await handle(payload)) as { ok: boolean; error?: { code: string } };
    if (response.ok) (spec.okAcks ??= metrics.acks.bind({ event, result: 'ok' })).add();
    else metrics.acks.inc({ event, result: response.error?.code ?? 'error' });
    ack?.(response);
  } catch (err) {
    spec.failures.warn(`handler:${event}`, err, 'event handler failed', target.logger.child({ event }));
    refuse(spec, ack, 'SERVER_UNAVAILABLE');
  }
}

/** Answers a refused event with an error ack, or counts it dropped when the peer gave no ack callback. */
function refuse(spec: GuardedEvent<unknown>, ack: Ack | undefined, code: AckCode, message?: string): void {
  spec.metrics.acks.inc({ event: spec.event, result: code });
  if (ack) ack(errorAck(code, message));
  else spec.metrics.dropped.inc({ reason: spec.event });
}
