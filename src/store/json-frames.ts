/**
 * Texts the hub writes by hand instead of with one `JSON.stringify`, so that a value serialized once
 * (a logged message's JSON, a runtime's socket id known only inside a Redis script, a long message
 * text) lands in a text built earlier: a {@link Template}. The store fills the templates it is given
 * ({@link fill}; its Redis scripts concatenate `before .. value .. after` exactly as fill does) and
 * never shapes one: the frames that cross replicas are shaped in cluster/frames.ts, the Socket.IO
 * adapter's broadcast in src/internals/redis-adapter.internals.ts.
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
 * Strings at least this long are written by {@link jsonAroundString} instead of copied into a
 * JSON string first: below it the copy costs less than looking for characters to escape.
 */
export const RAW_STRING_MIN = 256;

/** What JSON.stringify writes escaped: quote, backslash, controls; and surrogates (lone ones are escaped). */
// eslint-disable-next-line no-control-regex -- control characters are what JSON escapes
const ESCAPED = /["\\\u0000-\u001f\ud800-\udfff]/;

/**
 * `object`'s JSON around its string field `key`: `before + object[key] + after` is exactly
 * `JSON.stringify(object)`, the field's value written as it is. A long message text thus reaches
 * the log's bytes without being copied into the message's JSON string on the way (a copy of every
 * relayed text on the V8 heap). Null when the value is shorter than {@link RAW_STRING_MIN}, has a
 * character JSON escapes, or the field's place is not found exactly once: then stringify the whole.
 */
export function jsonAroundString(object: object, key: string): Template | null {
  const value = (object as Record<string, unknown>)[key];
  if (typeof value !== 'string' || value.length < RAW_STRING_MIN || ESCAPED.test(value)) return null;
  const json = JSON.stringify({ ...object, [key]: '' });
  const field = `${JSON.stringify(key)}:""`;
  const at = json.indexOf(field);
  if (at === -1 || json.indexOf(field, at + 1) !== -1) return null;
  const split = at + field.length - 1;
  return { before: json.slice(0, split), after: json.slice(split) };
}
