import pino, { type Logger } from 'pino';

export type { Logger };

/** Paths never written to logs: tokens, API keys, secrets and credentials in headers. */
const REDACT = [
  'token',
  'apiKey',
  'key',
  'secret',
  '*.token',
  '*.apiKey',
  '*.key',
  '*.secret',
  'auth.token',
  'auth.apiKey',
  'headers.authorization',
  'headers["api-key"]',
  'headers.cookie',
  '*.headers.authorization',
  '*.headers["api-key"]',
  '*.headers.cookie',
];

/** The root logger; components take `logger.child({ component })`. */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      redact: { paths: REDACT, censor: '[redacted]' },
      base: { service: 'relay-hub', pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    destination,
  );
}
