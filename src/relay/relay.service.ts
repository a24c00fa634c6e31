import type { Namespace } from 'socket.io';
import type { RuntimeEntry } from '../store/store';
import type { RuntimeDispatcher } from './dispatcher';
import { isoNow, uuidv7 } from './ids';
import { payloadError } from './payload-limits';
import {
  AckCodes,
  BROADCAST_TO,
  Events,
  SessionClosedCodes,
  type AckCode,
  type AgentReply,
  type AgentStatus,
  type ClientInboundMessage,
  type ClientMessage,
  type DebugTrace,
  type SendAck,
} from './protocol';
import { pickByRendezvous } from './rendezvous';
import type { RelayContext, RelayNamespaces } from './relay.context';
import { Rooms } from './rooms';

/** The sender of a client message, as verified at the handshake. */
export interface Sender {
  clientId: string;
  sub: string;
}

export function errorAck(code: AckCode, message: string = AckCodes[code]): SendAck & { ok: false } {
  return { ok: false, error: { code, message } };
}

/**
 * Relay operations shared by the socket handlers and the REST API: routing client messages to one
 * runtime, publishing to clients, the debug stream, and ending sessions of deactivated users.
 */
export class RelayService {
  constructor(
    private readonly ctx: RelayContext,
    private readonly nsp: RelayNamespaces,
    private readonly dispatcher: RuntimeDispatcher,
  ) {}

  /**
   * Delivers a validated client message to one runtime of `agentId`, chosen by rendezvous hashing
   * of `sub`, and resolves with the ack for the client. Retries reuse the stored id and ts.
   */
  async relayClientMessage(sender: Sender, agentId: string, payload: ClientMessage): Promise<SendAck> {
    const { config, store } = this.ctx;
    const dedupeKey = `${agentId}\u0000${sender.sub}\u0000${payload.clientMessageId}`;
    const now = Date.now();
    const fresh = { id: uuidv7(now), ts: isoNow(now), delivered: false };
    // Both in one round trip: a retry of a delivered message (rare) merely wastes the lookup.
    const [existing, live] = await Promise.all([
      store.dedupe.claim(dedupeKey, fresh, config.DEDUPE_WINDOW_S),
      store.presence.listRuntimes(agentId),
    ]);
    if (existing?.delivered) return { ok: true, id: existing.id, ts: existing.ts };
    const record = existing ?? fresh;

    const message = {
      id: record.id,
      ts: record.ts,
      agentId,
      from: sender.clientId,
      text: payload.text,
      ...(payload.data === undefined ? {} : { data: payload.data }),
    };
    // A runtime that vanished between presence and delivery is skipped; the next one by hash takes over.
    let runtimes = live;
    while (runtimes.length > 0) {
      const target = pickByRendezvous(sender.sub, runtimes, runtimeKey) as RuntimeEntry;
      const result = await this.dispatcher.deliver(target, message, config.AGENT_ACK_TIMEOUT_MS);
      if (result === 'acked') {
        await store.dedupe.markDelivered(dedupeKey, record, config.DEDUPE_WINDOW_S);
        this.ctx.metrics.messages.inc({ direction: 'client_to_agent' });
        return { ok: true, id: record.id, ts: record.ts };
      }
      if (result === 'timeout') return errorAck('TIMEOUT');
      runtimes = runtimes.filter((r) => r !== target);
    }
    return errorAck('AGENT_OFFLINE');
  }

  /** Sends a reply to every socket of one clientId of the bot, or to all its clients with `'*'`. */
  publish(agentId: string, reply: AgentReply): { id: string; ts: string } {
    const now = Date.now();
    const message: ClientInboundMessage = {
      id: uuidv7(now),
      ts: isoNow(now),
      agentId,
      text: reply.text,
      ...(reply.data === undefined ? {} : { data: reply.data }),
      ...(reply.replyTo === undefined ? {} : { replyTo: reply.replyTo }),
    };
    const room = reply.to === BROADCAST_TO ? Rooms.clients(agentId) : Rooms.client(agentId, reply.to);
    this.nsp.client.to(room).emit(Events.message, message);
    this.ctx.metrics.messages.inc({ direction: 'agent_to_client' });
    return { id: message.id, ts: message.ts };
  }

  /** Sends a trace to the bot's admin sockets, and no one else. */
  debug(agentId: string, trace: unknown, clientId?: string): void {
    const event: DebugTrace = { agentId, ...(clientId === undefined ? {} : { clientId }), trace, ts: isoNow() };
    this.nsp.client.to(Rooms.admins(agentId)).emit(Events.debug, event);
    this.ctx.metrics.messages.inc({ direction: 'debug' });
  }

  /** Tells a bot's clients that it came online or went offline. */
  agentStatus(agentId: string, online: boolean): void {
    announceAgentStatus(this.nsp.client, agentId, online);
  }

  /** Refuses new handshakes of `sub` and ends its sessions on every replica. */
  async deactivateUser(sub: string): Promise<void> {
    await this.ctx.store.deactivations.deactivate(sub);
    const room = this.nsp.client.to(Rooms.subject(sub));
    room.emit(Events.sessionClosed, { code: 'USER_DEACTIVATED', retryable: SessionClosedCodes.USER_DEACTIVATED.retryable });
    this.nsp.client.in(Rooms.subject(sub)).disconnectSockets();
  }

  async activateUser(sub: string): Promise<void> {
    await this.ctx.store.deactivations.activate(sub);
  }

  /** Validates size limits of an outgoing reply; null when it may be sent. */
  replyError(reply: AgentReply): (SendAck & { ok: false }) | null {
    const code = payloadError(reply.text, reply.data, this.ctx.config.MAX_MESSAGE_BYTES);
    return code ? errorAck(code) : null;
  }
}

function runtimeKey(runtime: RuntimeEntry): string {
  return runtime.socketId;
}

/** Tells every client of the bot, on every replica, whether a runtime of it is connected. */
export function announceAgentStatus(clients: Namespace, agentId: string, online: boolean): void {
  const status: AgentStatus = { agentId, online };
  clients.to(Rooms.clients(agentId)).emit(Events.agentStatus, status);
}
