import { AGENT_ID_PATTERN } from '../protocol';

/** The pattern of a key, or a token claim, that acts for every bot. */
export const EVERY_AGENT = '*';

/**
 * Whether `pattern` is an exact agentId or a prefix of one followed by `*` (`support-*`; a lone
 * `*` is every bot).
 */
export function isAgentPattern(pattern: unknown): pattern is string {
  if (typeof pattern !== 'string') return false;
  if (pattern.endsWith('*')) return pattern === EVERY_AGENT || AGENT_ID_PATTERN.test(pattern.slice(0, -1));
  return AGENT_ID_PATTERN.test(pattern);
}

/** Whether `agentId` is one of `patterns` (exact ids, or prefixes ending in `*`). */
export function agentAllowed(patterns: readonly string[], agentId: string): boolean {
  return patterns.some((p) => (p.endsWith('*') ? agentId.startsWith(p.slice(0, -1)) : p === agentId));
}

/**
 * The bots a managed API key acts for, on every scope it holds. A key stored before keys were
 * bound to bots has no `agentIds` and keeps acting for every bot (docs/upgrading.md, managed API
 * keys), exactly as if it had been created with `["*"]`.
 */
export function keyAgentPatterns(key: { agentIds?: readonly string[] }): readonly string[] {
  return key.agentIds ?? [EVERY_AGENT];
}

/** Whether `patterns` reach every bot. */
export function everyAgent(patterns: readonly string[]): boolean {
  return patterns.includes(EVERY_AGENT);
}
