import Redis, { type RedisOptions } from 'ioredis';
import type { Logger } from '../logging/logger';
import { ThrottledLog } from '../logging/throttled-log';
import type { HubMetrics } from '../metrics/metrics';

/** Reports a Redis failure: counted per component, logged at a bounded rate. */
export type RedisErrorReporter = (component: string, err: unknown, message: string) => void;

export function redisErrorReporter(logger: Logger, metrics: HubMetrics): RedisErrorReporter {
  const log = new ThrottledLog(logger);
  return (component, err, message) => {
    metrics.redisErrors.inc({ component });
    log.warn(component, err, message);
  };
}

/**
 * Options that keep a replica alive and its memory bounded while Redis is away: commands fail at
 * once instead of queueing (no offline queue), in-flight ones fail after `commandTimeout` instead
 * of being resent minutes later, and reconnects are retried forever with a capped delay so service
 * resumes about a second after Redis does.
 */
const BOUNDED: RedisOptions = {
  enableOfflineQueue: false,
  maxRetriesPerRequest: 1,
  autoResendUnfulfilledCommands: false,
  commandTimeout: 2000,
  connectTimeout: 2000,
  retryStrategy: (attempt) => Math.min(100 * attempt, 1000),
};

/** The connection for commands and publishes (store, adapter, dispatcher, canary). */
export function createCommandConnection(url: string, name: string): Redis {
  return new Redis(url, { ...BOUNDED, connectionName: name });
}

/**
 * The subscriber connection. Subscriptions lost while Redis was down are restored by the caller
 * on `ready` (ioredis only restores those that had succeeded), so no offline queue here either.
 */
export function createSubscriberConnection(url: string, name: string): Redis {
  return new Redis(url, { ...BOUNDED, commandTimeout: undefined, autoResendUnfulfilledCommands: true, connectionName: name });
}

/**
 * Attaches a rejection handler to every call of `commands` on `client`, so fire-and-forget calls
 * (the Redis adapter publishes and subscribes without awaiting) never become unhandled rejections.
 * Callers that do await still see the rejection.
 */
export function guardCommands(client: Redis, commands: readonly string[], onError: (command: string, err: unknown) => void): void {
  const target = client as unknown as Record<string, (...args: unknown[]) => unknown>;
  for (const command of commands) {
    const original = target[command].bind(client);
    target[command] = (...args: unknown[]) => {
      const result = original(...args);
      if (result instanceof Promise) result.catch((err: unknown) => onError(command, err));
      return result;
    };
  }
}

/** Resolves true once `client` is ready, false after `timeoutMs` (the caller carries on unready). */
export function whenReady(client: Redis, timeoutMs: number): Promise<boolean> {
  if (client.status === 'ready') return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => settle(false), timeoutMs);
    const onReady = () => settle(true);
    function settle(ready: boolean) {
      clearTimeout(timer);
      client.off('ready', onReady);
      resolve(ready);
    }
    client.on('ready', onReady);
  });
}

/** QUIT, or a hard disconnect when Redis does not answer within `timeoutMs`. */
export async function quitConnection(client: Redis, timeoutMs = 1000): Promise<void> {
  if (client.status === 'end') return;
  if (client.status !== 'ready') {
    client.disconnect();
    return;
  }
  const timer = setTimeout(() => client.disconnect(), timeoutMs);
  try {
    await client.quit();
  } catch {
    client.disconnect();
  } finally {
    clearTimeout(timer);
  }
}
