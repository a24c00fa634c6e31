import { AGENT_ID_PATTERN, CLIENT_NAMESPACE } from '../../../src/protocol';
import type { BackoffOptions } from './backoff';
import type { PersistOption } from './resume-point';
import type { TokenOption } from './token-source';
import { badOption, positive } from './checks';

/**
 * Options of {@link RelayChat}. Only `url`, `agentId` and `token` are required.
 *
 * @example
 * // Token from the integrator's backend, fetched again before every (re)connect and refresh.
 * new RelayChat({
 *   url: 'https://relay.example.com',
 *   agentId: 'support-bot',
 *   token: () => fetch('/chat-token', { method: 'POST' }).then((r) => r.json()).then((b) => b.token),
 * });
 *
 * @example
 * // Hub mounted under a path prefix behind a proxy, with a fixed token and a shorter backoff cap.
 * new RelayChat({ url: 'https://example.com', path: '/relay', agentId: 'bot', token: jwt, backoff: { capMs: 2_000 } });
 */
export interface RelayChatOptions {
  /** Origin of the hub, e.g. `https://relay.example.com`. */
  url: string;
  /** The bot to talk to: 1–128 characters of `[A-Za-z0-9._:-]`. */
  agentId: string;
  /**
   * A client JWT, or a getter returning a Promise of one. A getter is called before every connect
   * attempt and on `auth:expiring`, so sessions survive token expiry; a fixed string ends the
   * session with `TOKEN_EXPIRED` when it expires.
   */
  token: TokenOption;
  /** Path prefix the hub is mounted under (e.g. `/relay`); the engine path becomes `${path}/socket.io/`. */
  path?: string;
  /** Most unacknowledged messages held; further sends reject with `OUTBOX_FULL`. Default 100. */
  outboxLimit?: number;
  /** Reconnect delays: exponential with full jitter. Defaults `{ baseMs: 500, capMs: 5000 }`. */
  backoff?: BackoffOptions;
  /** How long the token getter may take before the attempt counts as failed. Default 10000. */
  tokenTimeoutMs?: number;
  /**
   * How long to wait for the hub's ack of a message or refresh, in ms; keep it above the hub's
   * `AGENT_ACK_TIMEOUT_MS`. Default 30000.
   */
  ackTimeoutMs?: number;
  /** Largest message accepted by `send`, as UTF-8 bytes of the JSON payload; match the hub's `MAX_MESSAGE_BYTES`. Default 65536. */
  maxMessageBytes?: number;
  /** How many recent inbound message ids are remembered to drop duplicates. Default 1000. */
  dedupeLimit?: number;
  /**
   * Where the id of the last message seen is kept, so that the reconnect after a page reload
   * replays what the page missed (every reconnect of a running chat does so anyway). `true`
   * (default): `sessionStorage` where the page has one (one entry per hub, bot and token `sub`);
   * `false`: memory only; or a storage of your own, e.g. `localStorage` to resume across tabs.
   */
  persist?: PersistOption;
}

/** The parts of the options the connection itself needs, checked and normalised. */
export interface Endpoint {
  /** Origin + client namespace, the first argument of `io()`. */
  uri: string;
  /** Socket.IO engine path. */
  path: string;
  agentId: string;
  ackTimeoutMs: number;
  maxMessageBytes: number;
}

export function resolveEndpoint(options: RelayChatOptions): Endpoint {
  if (typeof options?.url !== 'string' || !/^(https?|wss?):\/\/[^/]/.test(options.url)) {
    throw badOption('url', 'the hub origin, e.g. https://relay.example.com');
  }
  if (typeof options.agentId !== 'string' || !AGENT_ID_PATTERN.test(options.agentId)) {
    throw badOption('agentId', '1–128 characters of [A-Za-z0-9._:-]');
  }
  const prefix = (options.path ?? '').replace(/\/+$/, '');
  return {
    uri: options.url.replace(/\/+$/, '') + CLIENT_NAMESPACE,
    path: `${prefix && !prefix.startsWith('/') ? '/' : ''}${prefix}/socket.io/`,
    agentId: options.agentId,
    ackTimeoutMs: positive(options.ackTimeoutMs, 30_000, 'ackTimeoutMs'),
    maxMessageBytes: positive(options.maxMessageBytes, 65_536, 'maxMessageBytes'),
  };
}
