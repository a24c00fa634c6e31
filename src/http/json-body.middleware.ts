import express, { type RequestHandler } from 'express';
import { UnsupportedMediaTypeError } from './errors';

const JSON_TYPES = ['application/json', 'application/*+json'];
const METHODS_WITH_BODY = new Set(['POST', 'PUT', 'PATCH']);

/**
 * JSON request bodies for the REST routes: a non-empty body of another media type is a 415, a
 * body over `limitBytes` a 413 (rendered by the error middleware), malformed JSON a 400.
 */
export function jsonBody(limitBytes: number): RequestHandler[] {
  const requireJson: RequestHandler = (req, _res, next) => {
    if (!METHODS_WITH_BODY.has(req.method) || !hasBody(req.headers)) return next();
    if (req.is(JSON_TYPES)) return next();
    next(new UnsupportedMediaTypeError('Send the body as application/json.'));
  };
  return [requireJson, express.json({ limit: limitBytes, type: JSON_TYPES })];
}

/** A body is present when chunked or with a positive Content-Length (swagger-ui sends `0` for none). */
function hasBody(headers: Record<string, string | string[] | undefined>): boolean {
  if (headers['transfer-encoding'] !== undefined) return true;
  const length = Number(headers['content-length']);
  return Number.isFinite(length) && length > 0;
}
