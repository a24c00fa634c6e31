/** Human handoff and the operator console (docs/handoff.md). */
export const handoffSchema = {
  HANDOFF_IDLE_TIMEOUT_S: {
    doc: 'A conversation an operator holds goes back to the bot after this many seconds without a message from that operator (every replica sweeps; one hands it back).',
    format: 'positive-int',
    default: 900,
    env: 'HANDOFF_IDLE_TIMEOUT_S',
  },
  HANDOFF_SWEEP_MS: {
    doc: 'How often each replica looks for conversations held idle past HANDOFF_IDLE_TIMEOUT_S, in milliseconds.',
    format: 'positive-int',
    default: 5000,
    env: 'HANDOFF_SWEEP_MS',
  },
};
