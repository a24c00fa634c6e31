/**
 * The JSON frames the hub writes by hand instead of with one `JSON.stringify`, so that a value
 * serialized once (a logged message's JSON, a runtime's socket id known only inside a Redis script)
 * lands in a frame built earlier. Every such frame is a {@link Template} made and filled here, and
 * the Redis scripts that fill one concatenate `before .. value .. after` exactly as {@link fill}
 * does. The Socket.IO adapter's broadcast frame is the adapter's format: it is spelled in
 * src/internals/redis-adapter.internals.ts.
 */

/** A text with one value to fill in between `before` and `after`. */
export interface Template {
  before: string;
  after: string;
}

/** The text of `template` with `value` (already JSON, or a plain name part) in its place. */
export function fill(template: Template, value: string): string {
  return template.before + value + template.after;
}

/**
 * `object`'s JSON with one more field, `key`, last, whose JSON value is left to fill in. `object`
 * must not have `key` itself.
 */
export function withTrailingField(object: object, key: string): Template {
  const json = JSON.stringify(object);
  const open = json === '{}' ? '{' : `${json.slice(0, -1)},`;
  return { before: `${open}${JSON.stringify(key)}:`, after: '}' };
}

/** Parses a frame received from Redis; null for anything that is not JSON. */
export function parseFrame<T>(raw: Buffer | string): T | null {
  try {
    return JSON.parse(raw.toString()) as T;
  } catch {
    return null;
  }
}
