import type { Request } from 'express';
import type { JwtService } from '../auth/jwt.service';
import type { HubConfig } from '../config/config';
import type { Logger } from '../logging/logger';
import type { AuthFailureLimiter } from '../limits/auth-failure-limiter';
import type { RelayService } from '../relay/relay.service';
import type { Store } from '../store/store';
import type { ClientIpResolver } from '../net/client-ip';
import { ApiKeysService } from './services/api-keys.service';
import { ConversationsService } from './services/conversations.service';
import { EmbedTokensService } from './services/embed-tokens.service';
import { HandoffService } from './services/handoff.service';
import { UsersService } from './services/users.service';

/** Readiness of this replica: false while draining or when shared state is unreachable. */
export type ReadinessProbe = () => Promise<{ ready: boolean; checks: Record<string, boolean> }>;

/** What the app is built from. */
export interface HttpServiceDeps {
  config: HubConfig;
  logger: Logger;
  store: Store;
  jwt: JwtService;
  readiness: ReadinessProbe;
  /** The relay's service: what REST does to live sockets (deactivation, publishing). */
  relay: RelayService;
  /** Per-IP budget of failed authentications, shared with the socket handshakes. */
  authFailures: AuthFailureLimiter;
  clientIp: ClientIpResolver;
}

/**
 * What the REST controllers and the authentication module use, built once per Express app and
 * kept in `app.locals`, so several hubs in one process never share state.
 */
export interface HttpServices extends HttpServiceDeps {
  users: UsersService;
  apiKeys: ApiKeysService;
  embedTokens: EmbedTokensService;
  conversations: ConversationsService;
  handoff: HandoffService;
}

const LOCALS_KEY = 'relayHubServices';

export function createHttpServices(deps: HttpServiceDeps): HttpServices {
  return {
    ...deps,
    users: new UsersService(deps.store, deps.relay),
    conversations: new ConversationsService(deps.relay, deps.config.HISTORY_MAX_MESSAGES),
    apiKeys: new ApiKeysService(deps.store, deps.relay),
    embedTokens: new EmbedTokensService(deps.jwt, deps.config.MINT_MAX_EXPIRES_IN),
    handoff: new HandoffService(deps.relay),
  };
}

/** Stores the services on the app. */
export function provideServices(locals: Record<string, unknown>, services: HttpServices): void {
  locals[LOCALS_KEY] = services;
}

/** The services of the app that received `req`. */
export function servicesOf(req: Request): HttpServices {
  const services = req.app.locals[LOCALS_KEY] as HttpServices | undefined;
  if (!services) throw new Error('HTTP services are not installed on this app');
  return services;
}
