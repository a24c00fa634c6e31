import type { Namespace } from 'socket.io';
import type { AgentKeyMatcher } from '../auth/agent-keys';
import type { JwtService } from '../auth/jwt.service';
import type { HubConfig } from '../config/config';
import type { AuthFailureLimiter } from '../limits/auth-failure-limiter';
import type { MemoryPressure } from '../limits/memory-pressure';
import type { Logger } from '../logging/logger';
import type { ThrottledLog } from '../logging/throttled-log';
import type { HubMetrics } from '../metrics/metrics';
import type { MessagePart } from '../protocol';
import type { ConnectionInfoRegistry } from '../net/connection-info';
import type { SendBuffers } from '../net/send-buffers';
import type { SocketGate } from '../net/socket-gate';
import type { Publication } from '../store/conversation-log';
import type { Store } from '../store/store';
import type { ChangeFrame, DeltaPublication } from '../store/stream-store';
import type { DeadlineQueue } from './deadline-queue';

/** What the relay's namespaces and services share. Built once per hub by `createHub`. */
export interface RelayContext {
  config: HubConfig;
  logger: Logger;
  metrics: HubMetrics;
  store: Store;
  jwt: JwtService;
  /** The shared AGENT_API_KEYS, or null when AGENT_SHARED_KEYS_ENABLED=false. */
  agentKeys: AgentKeyMatcher | null;
  /** Token-expiry deadlines of this hub's client sessions, on one timer. */
  sessionDeadlines: DeadlineQueue;
  authFailures: AuthFailureLimiter;
  /** Client address and Origin of every connection. */
  connections: ConnectionInfoRegistry;
  /** Namespace sockets against the connection limits. */
  socketGate: SocketGate;
  /** What is queued for each peer, against MAX_SOCKET_BUFFER_BYTES. */
  sendBuffers: SendBuffers;
  /** Where event handler failures are logged, at a bounded rate. */
  handlerFailures: ThrottledLog;
  /** This replica's id in presence entries (the Socket.IO adapter's server id in a cluster). */
  replicaId: string;
  /** True when rooms span replicas: this replica's view of a room is not all of it. */
  clustered: boolean;
  /**
   * The shard channel carrying broadcasts to a client-namespace room between replicas, when the
   * store can count its subscribers (one per replica holding a socket of the room); else null.
   */
  roomChannel(room: string): string | null;
  /** What other replicas get of the relay's broadcasts to client-namespace rooms. */
  frames: RelayFrames;
  isDraining(): boolean;
  /** This replica's memory against its limit: past the high-water mark, new handshakes are refused. */
  memory: Pick<MemoryPressure, 'overHighWater'>;
  /** Resolves once room subscriptions made so far are in effect cluster-wide (a recovering client reads the log after). */
  subscriptionsSettled(): Promise<void>;
  /**
   * False while this replica's subscriptions are being restored after a drop: what other replicas
   * publish to its rooms does not reach it, so it takes no client session it could not serve.
   */
  subscriptionsIntact(): boolean;
}

/**
 * What other replicas get of a broadcast to a room of the client namespace, for the store to publish
 * in the step that logs or records what it carries (one Redis round trip instead of two): built by
 * the cluster layer, which shapes every frame that crosses replicas (cluster/frames.ts). Null where
 * the store does not publish (one replica, a Redis Cluster, a room without a channel of its own):
 * then emit as usual.
 */
export interface RelayFrames {
  /** `message` to `room`, the logged message's JSON as its data. */
  message(room: string): Publication | null;
  /** The `message:delta`s of stream `id` to `room`. */
  delta(room: string, id: string): DeltaFrames | null;
  /** The `message:part`s of stream `id` to `room`. */
  part(room: string, id: string): PartFrames | null;
  /** `message:end` to `room`, the ended stream's event as its data. */
  end(room: string): DeltaPublication | null;
}

/** A stream's `message:delta`s: their publication, and one as JSON around the seq the store assigns. */
export interface DeltaFrames {
  publication: DeltaPublication;
  around(text: string, index: number): ChangeFrame;
}

/** A stream's `message:part`s: their publication, and one as JSON around the seq the store assigns. */
export interface PartFrames {
  publication: DeltaPublication;
  around(index: number, part: MessagePart): ChangeFrame;
}

/** Socket data of an accepted client (docs/protocol.md, "Connecting"); `email` is for logs only. */
export interface ClientSocketData {
  clientId: string;
  sub: string;
  email?: string;
  roles: string[];
  agentId: string;
  /** ISO expiry of the current token, or null for a token without `exp`. */
  tokenExpiresAt: string | null;
}

/** Socket data of an accepted agent runtime. */
export interface AgentSocketData {
  agentId: string;
  /** Id of the managed API key the runtime connected with; absent for a shared AGENT_API_KEYS key. */
  apiKeyId?: string;
}

export interface RelayNamespaces {
  agent: Namespace;
  client: Namespace;
  /** The operator consoles' feed (docs/handoff.md). */
  operator: Namespace;
}

/** Socket data of an accepted operator console. */
export interface OperatorSocketData {
  agentId: string;
  sub: string;
  /** The name users see. */
  name: string;
  admin: boolean;
  /** The conversation this console follows, if any. */
  watching?: string;
}
