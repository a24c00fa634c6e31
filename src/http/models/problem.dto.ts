/** One field that failed validation. */
export interface FieldErrorDto {
  /**
   * Where the bad value is: `body.<field>`, `query.<name>` or `path.<name>`.
   * @example "body.email"
   */
  path: string;
  /**
   * What is wrong with it.
   * @example "invalid string value"
   */
  message: string;
}

/** RFC 9457 problem details, served as `application/problem+json` for every error. */
export interface ProblemDto {
  /**
   * Problem type URI; `about:blank` means the HTTP status says it all.
   * @example "about:blank"
   */
  type: string;
  /**
   * Short summary of the status.
   * @example "Bad Request"
   */
  title: string;
  /**
   * HTTP status code.
   * @isInt
   * @example 400
   */
  status: number;
  /**
   * Explanation of this occurrence.
   * @example "The request is invalid."
   */
  detail?: string;
  /**
   * Stable machine-readable code, e.g. `VALIDATION_FAILED`, `TOKEN_EXPIRED`, `FORBIDDEN`, `EMAIL_TAKEN`.
   * @example "VALIDATION_FAILED"
   */
  code: string;
  /** Per-field errors of a 400. */
  errors?: FieldErrorDto[];
  holder?: HolderDto;
}

/** On a 409 `CONVERSATION_HELD`: the operator who holds the conversation, as users see them (docs/handoff.md). */
export interface HolderDto {
  /** @example "Ana" */
  name: string;
}
