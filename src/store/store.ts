/**
 * Shared state behind one interface: in memory for the embedded single replica, Redis when
 * REDIS_URL is set (every replica sees the same state). Implementations know no transport.
 */

/** What the hub remembers of a client message for DEDUPE_WINDOW_S. */
export interface DedupeRecord {
  id: string;
  ts: string;
  delivered: boolean;
}

export interface DedupeStore {
  /** Stores `record` under `key` unless a record exists; returns the existing record, or null if stored. */
  claim(key: string, record: DedupeRecord, ttlS: number): Promise<DedupeRecord | null>;
  /** Marks the record delivered (keeping its id and ts) for another `ttlS`. */
  markDelivered(key: string, record: DedupeRecord, ttlS: number): Promise<void>;
}

/** Deactivated subjects. A deactivation outlives the user record. */
export interface DeactivationStore {
  isDeactivated(sub: string): Promise<boolean>;
  deactivate(sub: string): Promise<void>;
  activate(sub: string): Promise<void>;
}

/** One connected agent runtime: which socket, on which replica. */
export interface RuntimeEntry {
  socketId: string;
  replicaId: string;
}

export interface AgentPresence {
  agentId: string;
  runtimes: number;
  clients: number;
}

/**
 * Who is connected, cluster-wide. Entries belong to the replica that holds the socket; in Redis they
 * expire unless that replica refreshes them, so a dead replica's entries disappear.
 */
export interface PresenceStore {
  /** Adds a runtime and returns the bot's runtime count afterwards. */
  addRuntime(agentId: string, entry: RuntimeEntry): Promise<number>;
  /** Removes a runtime and returns the bot's runtime count afterwards. */
  removeRuntime(agentId: string, entry: RuntimeEntry): Promise<number>;
  listRuntimes(agentId: string): Promise<RuntimeEntry[]>;
  addClient(agentId: string, entry: RuntimeEntry): Promise<void>;
  removeClient(agentId: string, entry: RuntimeEntry): Promise<void>;
  /** Bots with at least one runtime or client, sorted by agentId. */
  listAgents(): Promise<AgentPresence[]>;
  getAgent(agentId: string): Promise<AgentPresence>;
}

/** A user of the integrator; `id` is the JWT `sub`. */
export interface UserRecord {
  id: string;
  email: string;
  name: string;
  phone: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface UserQuery {
  offset: number;
  limit: number;
  /** Exact (case-insensitive) email. */
  email?: string;
  /** Case-insensitive substring of id, email or name. */
  q?: string;
}

/** Thrown by create/update when a unique field is taken. */
export class DuplicateError extends Error {
  constructor(readonly field: 'id' | 'email') {
    super(`${field} already exists`);
    this.name = 'DuplicateError';
  }
}

export interface UserStore {
  list(query: UserQuery): Promise<{ items: UserRecord[]; total: number }>;
  get(id: string): Promise<UserRecord | null>;
  /** Throws {@link DuplicateError} when id or email exists. */
  create(user: UserRecord): Promise<void>;
  /** Returns the updated record or null when unknown; throws {@link DuplicateError} on a taken email. */
  update(id: string, patch: Partial<Pick<UserRecord, 'email' | 'name' | 'phone'>>): Promise<UserRecord | null>;
  /** Returns the deleted record or null when unknown. */
  delete(id: string): Promise<UserRecord | null>;
}

/** A REST API key; the secret itself is never stored, only its SHA-256 hash (hex). */
export interface ApiKeyRecord {
  id: string;
  name: string;
  scopes: string[];
  /** First characters of the key, shown to tell keys apart. */
  prefix: string;
  hash: string;
  createdAt: string;
  lastUsedAt: string | null;
}

export interface ApiKeyStore {
  list(): Promise<ApiKeyRecord[]>;
  get(id: string): Promise<ApiKeyRecord | null>;
  create(record: ApiKeyRecord): Promise<void>;
  delete(id: string): Promise<ApiKeyRecord | null>;
  findByHash(hash: string): Promise<ApiKeyRecord | null>;
  touch(id: string, at: string): Promise<void>;
}

/** Fixed-window counters (rate limits shared by replicas). */
export interface CounterStore {
  /** Increments `key` and returns the count within the current window of `windowS` seconds. */
  increment(key: string, windowS: number): Promise<number>;
  get(key: string): Promise<number>;
}

export interface Store {
  readonly kind: 'memory' | 'redis';
  readonly dedupe: DedupeStore;
  readonly deactivations: DeactivationStore;
  readonly presence: PresenceStore;
  readonly users: UserStore;
  readonly apiKeys: ApiKeyStore;
  readonly counters: CounterStore;
  close(): Promise<void>;
}
