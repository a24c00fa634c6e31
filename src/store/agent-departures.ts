/**
 * When each bot's last runtime left, kept for the restart grace (AGENT_RECONNECT_GRACE_MS) so every
 * replica lets client messages wait for a runtime instead of answering AGENT_OFFLINE. A mark is
 * `<unix ms>:<unique>`, so the replica that set it can tell whether a later departure replaced it.
 */
export interface AgentDepartures {
  /** Records a departure, remembered for `ttlMs`. */
  mark(agentId: string, mark: string, ttlMs: number): Promise<void>;
  /** The latest departure's mark, or null when none is remembered. */
  get(agentId: string): Promise<string | null>;
  /** Forgets the departure (only if it is still `mark`, when given). */
  clear(agentId: string, mark?: string): Promise<void>;
}
