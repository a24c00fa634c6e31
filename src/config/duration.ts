const UNIT_SECONDS = { s: 1, m: 60, h: 3600, d: 86400 } as const;

/** Pattern of a lifetime such as `15m`, `1h`, `7d`: 1–99999 followed by s, m, h or d. */
export const DURATION_PATTERN = /^[1-9]\d{0,4}[smhd]$/;

/** Seconds in a `<n>(s|m|h|d)` duration; throws on anything else. */
export function durationSeconds(value: string): number {
  if (!DURATION_PATTERN.test(value)) throw new RangeError(`invalid duration "${value}"`);
  const unit = value.slice(-1) as keyof typeof UNIT_SECONDS;
  return Number(value.slice(0, -1)) * UNIT_SECONDS[unit];
}
