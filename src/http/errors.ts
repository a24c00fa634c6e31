/** One field that failed validation, with a path like `body.email`. */
export interface FieldError {
  path: string;
  message: string;
}

/**
 * Base of every HTTP error. The error middleware renders it as RFC 9457 problem+json
 * `{ type, title, status, detail?, code, errors? }`.
 */
export class AppError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly title: string,
    detail?: string,
    readonly errors?: FieldError[],
  ) {
    super(detail ?? title);
    this.name = new.target.name;
  }

  get detail(): string | undefined {
    return this.message === this.title ? undefined : this.message;
  }
}

export class ValidationError extends AppError {
  constructor(errors: FieldError[], detail = 'The request is invalid.') {
    super(400, 'VALIDATION_FAILED', 'Bad Request', detail, errors);
  }
}

export class UnauthorizedError extends AppError {
  constructor(code = 'UNAUTHORIZED', detail?: string) {
    super(401, code, 'Unauthorized', detail);
  }
}

export class ForbiddenError extends AppError {
  constructor(code = 'FORBIDDEN', detail?: string) {
    super(403, code, 'Forbidden', detail);
  }
}

export class NotFoundError extends AppError {
  constructor(detail?: string) {
    super(404, 'NOT_FOUND', 'Not Found', detail);
  }
}

export class ConflictError extends AppError {
  constructor(code: string, detail?: string) {
    super(409, code, 'Conflict', detail);
  }
}

export class PayloadTooLargeError extends AppError {
  constructor(detail?: string) {
    super(413, 'PAYLOAD_TOO_LARGE', 'Payload Too Large', detail);
  }
}

export class UnsupportedMediaTypeError extends AppError {
  constructor(detail?: string) {
    super(415, 'UNSUPPORTED_MEDIA_TYPE', 'Unsupported Media Type', detail);
  }
}

export class RateLimitedError extends AppError {
  constructor(
    /** Sent as `Retry-After`. */
    readonly retryAfterS: number,
    detail?: string,
  ) {
    super(429, 'RATE_LIMITED', 'Too Many Requests', detail);
  }
}

export class ServiceUnavailableError extends AppError {
  constructor(code = 'SERVICE_UNAVAILABLE', detail?: string) {
    super(503, code, 'Service Unavailable', detail);
  }
}
