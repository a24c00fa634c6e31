/** The TypeError of an option `name` that is not `what` it must be; options are checked at construction. */
export function badOption(name: string, what: string): TypeError {
  return new TypeError(`RelayChat: ${name} must be ${what}`);
}

/** `value` checked to be a positive number (`integer`: a positive integer), or `fallback` when it is undefined. */
export function positive(value: number | undefined, fallback: number, name: string, integer = false): number {
  if (value === undefined) return fallback;
  if (!(integer ? Number.isInteger(value) : Number.isFinite(value)) || value <= 0) {
    throw badOption(name, integer ? 'a positive integer' : 'a positive number');
  }
  return value;
}
