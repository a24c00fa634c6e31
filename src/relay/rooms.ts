/**
 * Room names, kept here alone. `#` cannot occur in an agentId, so every name parses one way even
 * though a clientId (a JWT `sub`) may contain any character.
 */
export const Rooms = {
  /** Every runtime of a bot. */
  runtimes: (agentId: string) => `runtimes#${agentId}`,
  /** Every socket (tab) of one clientId of a bot; `'admin'` holds all its admins. */
  client: (agentId: string, clientId: string) => `client#${agentId}#${clientId}`,
  /** Every client socket of a bot. */
  clients: (agentId: string) => `clients#${agentId}`,
  /** Admin client sockets of a bot (receivers of the debug stream). */
  admins: (agentId: string) => `admins#${agentId}`,
  /** Every client socket of one subject, across bots (deactivation). */
  subject: (sub: string) => `sub#${sub}`,
  /** Every agent runtime that connected with one managed API key (revocation). */
  apiKey: (keyId: string) => `key#${keyId}`,
} as const;
