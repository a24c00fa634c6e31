import { ValidateError } from '@tsoa/runtime';
import type { ErrorRequestHandler, RequestHandler } from 'express';
import type { Logger } from '../logging/logger';
import {
  AppError,
  ConversationHeldError,
  NotFoundError,
  PayloadTooLargeError,
  RateLimitedError,
  UnsupportedMediaTypeError,
  ValidationError,
} from './errors';
import { fromValidateError } from './validation-error';

export const PROBLEM_JSON = 'application/problem+json';

/** Renders every error as RFC 9457 problem+json; unknown errors become a logged 500. */
export function problemMiddleware(logger: Logger): ErrorRequestHandler {
  return (err, req, res, _next) => {
    const problem = toAppError(err, req.originalUrl.split('?')[0]);
    if (problem.status >= 500) logger.error({ err, method: req.method, path: req.path }, 'request failed');
    if (problem instanceof RateLimitedError) res.set('Retry-After', String(problem.retryAfterS));
    res
      .status(problem.status)
      .type(PROBLEM_JSON)
      .json({
        type: `about:blank`,
        title: problem.title,
        status: problem.status,
        ...(problem.detail === undefined ? {} : { detail: problem.detail }),
        code: problem.code,
        ...(problem.errors === undefined ? {} : { errors: problem.errors }),
        ...(problem instanceof ConversationHeldError && problem.holder ? { holder: problem.holder } : {}),
      });
  };
}

/** 404 problem for routes nobody handled. */
export const notFoundHandler: RequestHandler = (req, _res, next) => {
  next(new NotFoundError(`No route for ${req.method} ${req.path}`));
};

function toAppError(err: unknown, path: string): AppError {
  if (err instanceof AppError) return err;
  if (err instanceof ValidateError) return fromValidateError(err);
  const e = err as { type?: string; status?: number; statusCode?: number; message?: string };
  // body-parser errors carry a `type`.
  if (e?.type === 'entity.too.large') return new PayloadTooLargeError('The request body exceeds the size limit.');
  if (e?.type === 'entity.parse.failed')
    return new ValidationError([{ path: 'body', message: 'malformed JSON' }], 'The request body is not valid JSON.');
  const status = e?.status ?? e?.statusCode;
  if (status === 415) return new UnsupportedMediaTypeError(e.message);
  // A file the static SDK route does not have (serve-static's 404) is not found, not a bad request.
  if (status === 404) return new NotFoundError(`No file at ${path}`);
  if (typeof status === 'number' && status >= 400 && status < 500) return new AppError('BAD_REQUEST', e.message);
  return new AppError('INTERNAL');
}
