import { timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import { sha256 } from '../auth/agent-keys';
import { BEARER_PREFIX } from './authentication';
import { UnauthorizedError } from './errors';

/**
 * Guards `/metrics` with METRICS_TOKEN when one is configured: `Authorization: Bearer <token>`,
 * compared as digests in constant time; anything else is a 401 problem. Without a token the
 * endpoint is open, for deployments where only the scraper can reach the replica.
 */
export function metricsAuth(token: string | null): RequestHandler {
  if (token === null) return (_req, _res, next) => next();
  const expected = sha256(token);
  return (req, _res, next) => {
    const presented = BEARER_PREFIX.exec(req.headers.authorization ?? '')?.[1];
    if (presented !== undefined && timingSafeEqual(sha256(presented), expected)) return next();
    next(new UnauthorizedError('METRICS_TOKEN_REQUIRED', 'Send Authorization: Bearer <METRICS_TOKEN>.'));
  };
}
