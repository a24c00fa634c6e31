import type { Socket } from 'socket.io';
import type { Logger } from '../logging/logger';
import { ThrottledLog } from '../logging/throttled-log';
import type { HubMetrics } from '../metrics/metrics';
import { errorAck } from './relay.service';
import type { AckCode } from './protocol';
import type { TokenBucket } from './token-bucket';

type Ack = (response: unknown) => void;

// Handler failures are mostly shared state being unreachable; while Redis is down every event
// fails the same way, so they are logged at a bounded rate per hub (keyed by its metrics).
const failureLogs = new WeakMap<HubMetrics, ThrottledLog>();

export interface GuardOptions<T> {
  event: string;
  socket: Socket;
  bucket: TokenBucket;
  /** Refused events in a row after which the socket is disconnected. */
  maxStrikes: number;
  validate(payload: unknown): payload is T;
  metrics: HubMetrics;
  logger: Logger;
  /** Runs when a rate-limited socket is cut off, before the disconnect. */
  onAbuse(): void;
}

/**
 * Wraps an inbound event handler: rate limit, schema validation, and a catch-all, so bad input gets
 * an error ack (or is dropped and counted when no ack callback was given) and never throws into
 * Socket.IO or touches other connections.
 */
export function guardEvent<T>(options: GuardOptions<T>, handle: (payload: T) => Promise<unknown> | unknown) {
  const { event, socket, bucket, metrics, logger } = options;
  return async (...args: unknown[]): Promise<void> => {
    // Socket.IO passes the ack callback last, whatever the peer sent before it: `emit(event, ack)`
    // or `emit(event, payload, extra, ack)` must still get their error ack, not a silent timeout.
    const last = args[args.length - 1];
    const hasAck = typeof last === 'function';
    const payload = hasAck && args.length === 1 ? undefined : args[0];
    const ack: Ack = hasAck ? (last as Ack) : () => metrics.dropped.inc({ reason: event });
    const fail = (code: AckCode) => {
      metrics.acks.inc({ event, result: code });
      ack(errorAck(code));
    };

    if (!bucket.take()) {
      fail('RATE_LIMITED');
      if (bucket.strikes >= options.maxStrikes) {
        logger.warn({ event, strikes: bucket.strikes }, 'socket kept sending while rate limited; disconnecting');
        options.onAbuse();
        socket.disconnect();
      }
      return;
    }
    if (!options.validate(payload)) return fail('INVALID_PAYLOAD');
    try {
      const response = (await handle(payload)) as { ok: boolean; error?: { code: string } };
      metrics.acks.inc({ event, result: response.ok ? 'ok' : (response.error?.code ?? 'error') });
      if (hasAck) ack(response);
    } catch (err) {
      let failures = failureLogs.get(metrics);
      if (!failures) failureLogs.set(metrics, (failures = new ThrottledLog(logger)));
      failures.warn(`handler:${event}`, err, 'event handler failed', logger.child({ event }));
      fail('SERVER_UNAVAILABLE');
    }
  };
}
