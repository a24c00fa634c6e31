import { AGENT_ID_PATTERN } from '../protocol';

/** Longest `agentIds` list a managed key may carry (one check per entry on every use). */
export const MAX_AGENT_PATTERNS = 100;

/**
 * Whether `pattern` is an exact agentId or a prefix of one followed by `*` (`support-*`; a lone
 * `*` is every bot).
 */
export function isAgentPattern(pattern: unknown): pattern is string {
  if (typeof pattern !== 'string') return false;
  if (pattern.endsWith('*')) return pattern === '*' || AGENT_ID_PATTERN.test(pattern.slice(0, -1));
  return AGENT_ID_PATTERN.test(pattern);
}

/** Whether `agentId` is one of `patterns` (exact ids, or prefixes ending in `*`). */
export function agentAllowed(patterns: readonly string[], agentId: string): boolean {
  return patterns.some((p) => (p.endsWith('*') ? agentId.startsWith(p.slice(0, -1)) : p === agentId));
}
