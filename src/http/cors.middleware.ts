import type { RequestHandler } from 'express';

const ALLOWED_METHODS = 'GET,POST,PUT,DELETE';
const ALLOWED_HEADERS = 'authorization,api-key,content-type';

/**
 * CORS for the REST routes under CORS_ORIGINS (`*` = any origin). Credentials travel in headers
 * (bearer token, `api-key`), never cookies, so no `Allow-Credentials`. A preflight from an allowed
 * origin is answered here with 204; other origins get no CORS headers and the browser blocks them.
 */
export function restCors(origins: readonly string[]): RequestHandler {
  const any = origins.includes('*');
  const allowed = new Set(origins);
  return (req, res, next) => {
    const origin = req.headers.origin;
    if (origin === undefined) return next();
    res.vary('Origin');
    if (!any && !allowed.has(origin)) return next();
    res.setHeader('Access-Control-Allow-Origin', any ? '*' : origin);
    if (req.method === 'OPTIONS' && req.headers['access-control-request-method'] !== undefined) {
      res.setHeader('Access-Control-Allow-Methods', ALLOWED_METHODS);
      res.setHeader('Access-Control-Allow-Headers', ALLOWED_HEADERS);
      res.setHeader('Access-Control-Max-Age', '600');
      res.status(204).end();
      return;
    }
    next();
  };
}
