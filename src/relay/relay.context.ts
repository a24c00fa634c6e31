import type { Namespace } from 'socket.io';
import type { AgentKeyMatcher } from '../auth/agent-keys';
import type { JwtService } from '../auth/jwt.service';
import type { HubConfig } from '../config/config';
import type { Logger } from '../logging/logger';
import type { HubMetrics } from '../metrics/metrics';
import type { Store } from '../store/store';
import type { DeadlineQueue } from './deadline-queue';
import type { AuthFailureLimiter } from './auth-failure-limiter';

/** What the relay's namespaces and services share. Built once per hub by `createHub`. */
export interface RelayContext {
  config: HubConfig;
  logger: Logger;
  metrics: HubMetrics;
  store: Store;
  jwt: JwtService;
  agentKeys: AgentKeyMatcher;
  /** Token-expiry deadlines of this hub's client sessions, on one timer. */
  sessionDeadlines: DeadlineQueue;
  authFailures: AuthFailureLimiter;
  /** This replica's id in presence entries (the Socket.IO adapter's server id in a cluster). */
  replicaId: string;
  isDraining(): boolean;
}

/** Socket data of an accepted client (SPEC §2.1); `email` is for logs only. */
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
}

export interface RelayNamespaces {
  agent: Namespace;
  client: Namespace;
}
