import { ProblemCodes, type ProblemCode } from '../protocol';
import { MAX_JSON_DEPTH } from '../protocol/payload-limits';

/** One field that failed validation, with a path like `body.email`. */
export interface FieldError {
  path: string;
  message: string;
}

/** The problem codes the catalogue gives HTTP status `S`. */
type CodeWithStatus<S extends number> = { [K in ProblemCode]: (typeof ProblemCodes)[K]['status'] extends S ? K : never }[ProblemCode];

const TITLES: Readonly<Record<number, string>> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  409: 'Conflict',
  413: 'Payload Too Large',
  415: 'Unsupported Media Type',
  429: 'Too Many Requests',
  507: 'Insufficient Storage',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

/**
 * Base of every HTTP error: a code of the REST problem catalogue (src/protocol/codes.ts), which
 * also fixes the status. The error middleware renders it as RFC 9457 problem+json
 * `{ type, title, status, detail?, code, errors? }`.
 */
export class AppError extends Error {
  readonly status: number;
  readonly title: string;

  constructor(
    readonly code: ProblemCode,
    detail?: string,
    readonly errors?: FieldError[],
  ) {
    const status = ProblemCodes[code].status;
    const title = TITLES[status] ?? 'Error';
    super(detail ?? title);
    this.status = status;
    this.title = title;
    this.name = new.target.name;
  }

  get detail(): string | undefined {
    return this.message === this.title ? undefined : this.message;
  }
}

export class ValidationError extends AppError {
  constructor(errors: FieldError[], detail = 'The request is invalid.') {
    super('VALIDATION_FAILED', detail, errors);
  }
}

export class UnauthorizedError extends AppError {
  constructor(code: CodeWithStatus<401>, detail?: string) {
    super(code, detail);
  }
}

export class ForbiddenError extends AppError {
  constructor(code: CodeWithStatus<403>, detail?: string) {
    super(code, detail);
  }
}

export class NotFoundError extends AppError {
  constructor(detail?: string) {
    super('NOT_FOUND', detail);
  }
}

export class ConflictError extends AppError {
  constructor(code: CodeWithStatus<409>, detail?: string) {
    super(code, detail);
  }
}

/** 409 `CONVERSATION_HELD`: another operator holds the conversation; the problem names them as `holder` (docs/handoff.md). */
export class ConversationHeldError extends ConflictError {
  constructor(
    readonly holder: { name: string } | undefined,
    detail?: string,
  ) {
    super('CONVERSATION_HELD', detail);
  }
}

export class PayloadTooLargeError extends AppError {
  constructor(detail?: string) {
    super('PAYLOAD_TOO_LARGE', detail);
  }
}

export class UnsupportedMediaTypeError extends AppError {
  constructor(detail?: string) {
    super('UNSUPPORTED_MEDIA_TYPE', detail);
  }
}

export class RateLimitedError extends AppError {
  constructor(
    /** Sent as `Retry-After`. */
    readonly retryAfterS: number,
    detail?: string,
  ) {
    super('RATE_LIMITED', detail);
  }
}

/** The bot's storage quota has no room for what the operation would store; nothing was done. */
export class InsufficientStorageError extends AppError {
  constructor(detail?: string) {
    super('QUOTA_EXCEEDED', detail);
  }
}

/** Shared state the operation needs (the conversation log) is unreachable; nothing was done. */
export class ServiceUnavailableError extends AppError {
  constructor(detail?: string) {
    super('SERVICE_UNAVAILABLE', detail);
  }
}

/** A refused content's message (`parts[2] (file).url: …`, `data: nests deeper …`) as a problem's field error. */
export function contentFieldError(message: string): { path: string; message: string } {
  const at = /^([A-Za-z]+(?:\[\d+\])?)[^:]*: /.exec(message);
  if (at) return { path: `body.${at[1]}`, message };
  return { path: 'body.data', message: message.startsWith('nests') ? message : `nests deeper than ${MAX_JSON_DEPTH} levels` };
}
