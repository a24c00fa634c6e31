import type { RateBudget } from '../limits/rate-budgets';
import { checkContent } from '../protocol/part-checks';
import type { DedupeKey, Intake, RuntimeEntry } from '../store/store';
import type { Tally } from '../metrics/metrics';
import type { AgentStatusAnnouncer } from './agent-status';
import type { DeliveryRecord, DeliveryResult, RuntimeDispatcher } from './dispatcher';
import { isoNow, MessageStamper } from './ids';
import {
  agentInboundMessage,
  Authors,
  botMessage,
  BROADCAST_TO,
  errorAck,
  Events,
  userMessage,
  type AgentInboundMessage,
  type AgentReply,
  type ClientInboundMessage,
  type ClientMessage,
  type ControlState,
  type DebugTrace,
  type MessageContent,
  type SendAck,
} from '../protocol';
import { AgentGrace } from './agent-grace';
import { MessageLog } from './message-log';
import { DeliveryBudget } from './delivery-budget';
import { UserBudgets } from './user-budgets';
import { pickByRendezvousSeed, rendezvousSeed } from './rendezvous';
import type { RelayContext, RelayNamespaces } from './relay.context';
import { Rooms, toRoom } from './rooms';
import { SessionEndings } from './session-endings.service';
import { ActivityTracker } from './streams/activity-tracker';
import { QuotaExceededError } from '../store/bot-quota';
import { ConversationHeldError } from '../store/control-store';
import { ConsoleFeed } from './handoff/console-feed';
import { ControlConflictError, ConversationControl } from './handoff/conversation-control';

/** The sender of a client message, as verified at the handshake. */
export interface Sender {
  clientId: string;
  sub: string;
  /** The sending socket, left out of the echo to the clientId's other tabs. */
  socketId?: string;
}

/** A client message the intake admitted, on its way to a runtime. */
interface Admitted {
  agentId: string;
  sender: Sender;
  /** The sender's room (their tabs). */
  room: string;
  /** The rendezvous seed of the sender's sub. */
  seed: number;
  /** The message as logged and echoed. */
  entry: ClientInboundMessage;
  /** The message as the runtime gets it. */
  message: AgentInboundMessage;
  /** Its dedupe record, marked delivered on the runtime's ack. */
  delivery: DeliveryRecord;
  runtimes: RuntimeEntry[];
  /** The runtime the intake picked (its script's rendezvous pick), delivered to first; absent where the relay picks. */
  picked?: RuntimeEntry;
  /** The runtime the intake handed it to, and how that delivery ends. */
  handed: { target: RuntimeEntry; result: Promise<DeliveryResult> } | null;
  subscribers: number | null;
  control: ControlState;
  /** Set once it waited for a runtime: the end of the bot's restart grace. */
  deadline?: number;
}

/**
 * Relay operations shared by the socket handlers and the REST API: routing client messages to one
 * runtime, publishing to clients, the debug stream; ending sessions is {@link SessionEndings}'.
 */
export class RelayService {
  /** The relay's side of the conversation log, written before every delivery (docs/protocol.md, "Conversations and delivery guarantees"). */
  readonly messageLog: MessageLog;
  /** The restart grace: messages wait for a returning runtime; offline is announced after it. */
  private readonly grace: AgentGrace;
  /** Each bot's deliveries per second on this replica, spent by every publish, activity and stream event. */
  readonly deliveries: DeliveryBudget;
  /** Each user's budget for what they ask of the hub besides messages (feedback, stop, history, replay bytes). */
  readonly users: UserBudgets;
  private readonly stamps = new MessageStamper();
  private readonly toAgent: Tally;
  private readonly toClients: Tally;
  /** What bots are doing for their users (docs/streaming.md). */
  readonly activity: ActivityTracker;
  private readonly userLimited: Tally;
  /** Each user's budget for messages to one bot, over all their sockets and replicas; null: unlimited. */
  private readonly userBudget: RateBudget | null;
  /** What operator consoles receive (docs/handoff.md). */
  readonly feed: ConsoleFeed;
  /** Who answers each conversation: the bot or an operator (docs/handoff.md). */
  readonly control: ConversationControl;
  /** Ends sessions of deactivated users and revoked keys, on every replica. */
  readonly sessions: SessionEndings;

  constructor(
    private readonly ctx: RelayContext,
    private readonly nsp: RelayNamespaces,
    private readonly dispatcher: RuntimeDispatcher,
    private readonly statuses: AgentStatusAnnouncer,
  ) {
    this.messageLog = new MessageLog(ctx.store.log, ctx.config, ctx.metrics);
    this.grace = new AgentGrace(ctx, statuses);
    this.activity = new ActivityTracker(nsp.client, ctx.config.ACTIVITY_TTL_MS);
    this.deliveries = new DeliveryBudget(ctx, nsp);
    this.users = new UserBudgets(ctx);
    this.toAgent = ctx.metrics.messages.bind({ direction: 'client_to_agent' });
    this.toClients = ctx.metrics.messages.bind({ direction: 'agent_to_client' });
    this.userLimited = ctx.metrics.rateLimited.bind({ scope: 'user' });
    const { USER_MESSAGE_RATE_PER_S: ratePerS, USER_MESSAGE_RATE_BURST: burst } = ctx.config;
    this.userBudget = ratePerS === 0 ? null : { ratePerS, burst };
    this.feed = new ConsoleFeed(ctx, nsp);
    this.control = new ConversationControl(ctx, nsp, this.messageLog, this.feed);
    this.sessions = new SessionEndings(ctx, nsp);
  }

  /**
   * Delivers a validated client message to one runtime of `agentId` and resolves with the ack for
   * the client: intake → deliver → ack (docs/architecture.md, "A client message"). Retries reuse the
   * stored id and ts. The message is logged before it is delivered (a retry's append is a no-op:
   * same id), and once a runtime has it, echoed to the sender's other tabs.
   */
  async relayClientMessage(sender: Sender, agentId: string, payload: ClientMessage): Promise<SendAck> {
    const admitted = await this.admit(sender, agentId, payload);
    if (!('delivery' in admitted)) return admitted;
    const result = await this.deliver(admitted);
    if (result === 'acked') return this.acked(admitted);
    return errorAck(result === 'timeout' ? 'TIMEOUT' : 'AGENT_OFFLINE');
  }

  /**
   * The intake: the sender's budget, the control state, the dedupe claim, the runtime lookup and the
   * usual append are one store call ({@link MessageIntake}); on one Redis server that call also hands
   * the message to its runtime's replica, the one the store picks ({@link Handoff}). Then what the
   * intake could not do: wait for a runtime in the bot's restart grace, log a retry or a message
   * that waited. The message on its way, or the ack that ends it here.
   */
  private async admit(sender: Sender, agentId: string, payload: ClientMessage): Promise<Admitted | SendAck> {
    const { config, store } = this.ctx;
    const key: DedupeKey = { agentId, sub: sender.sub, clientMessageId: payload.clientMessageId };
    const { id, ts } = this.stamps.next();
    const fresh = { id, ts, delivered: false };
    const logged = userMessage({ id, ts, agentId }, payload, payload.clientMessageId);
    const room = Rooms.client(agentId, sender.clientId);
    const seed = rendezvousSeed(sender.sub);
    // Built unobserved: the intake reads who holds the conversation and, while an operator does,
    // marks the request it hands to the runtime's replica observed (docs/handoff.md).
    const unobserved = agentInboundMessage({ id, ts, agentId }, sender.clientId, payload);
    const ttlS = config.DEDUPE_WINDOW_S;
    const prepared = this.dispatcher.prepare(unobserved, config.AGENT_ACK_TIMEOUT_MS, seed, { key, record: fresh, ttlS });
    let intake: Intake;
    try {
      intake = await store.intake.admit({
        key,
        record: fresh,
        ttlS,
        clientId: sender.clientId,
        message: this.messageLog.enabled ? logged : null,
        subscribersOf: this.ctx.roomChannel(room),
        handoff: prepared?.handoff ?? null,
        budget: this.userBudget,
      });
    } catch (err) {
      prepared?.cancel();
      // Counted as a failed append whenever the log is on: the intake writes it in the same step.
      if (this.messageLog.enabled) this.messageLog.failed(Authors.user);
      throw err;
    }
    const { existing, handedTo, control } = intake;
    if (handedTo === null) prepared?.cancel();
    if (intake.limited) {
      this.userLimited.add();
      return errorAck('RATE_LIMITED', USER_LIMITED);
    }
    if (intake.quota) {
      this.ctx.metrics.quotaExceeded.inc({ limit: 'bytes' });
      return errorAck('QUOTA_EXCEEDED');
    }
    if (existing?.delivered) return { ok: true, id: existing.id, ts: existing.ts };
    const record = existing ?? fresh;
    const stamp = { id: record.id, ts: record.ts, agentId };
    const entry = existing ? userMessage(stamp, payload, payload.clientMessageId) : logged;
    const observed = control === 'human';
    const message = existing || observed ? agentInboundMessage(stamp, sender.clientId, payload, observed) : unobserved;
    const admitted: Admitted = {
      agentId,
      sender,
      room,
      seed,
      entry,
      message,
      delivery: { key, record, ttlS },
      runtimes: intake.runtimes,
      ...(intake.picked && { picked: intake.picked }),
      handed: handedTo && prepared ? { target: handedTo.runtime, result: prepared.handedOff(handedTo.receivers) } : null,
      subscribers: intake.subscribers,
      control,
    };
    // No runtime: wait for one only while the bot is in its restart grace.
    if (admitted.runtimes.length === 0) {
      const wait = await this.grace.remainingMs(agentId);
      if (wait === 0) return errorAck('AGENT_OFFLINE');
      admitted.deadline = Date.now() + wait;
      admitted.runtimes = await this.grace.waitForRuntime(agentId, admitted.deadline);
      if (admitted.runtimes.length === 0) return errorAck('AGENT_OFFLINE');
    }
    if (intake.logged) this.messageLog.counted(Authors.user);
    else {
      const unlogged = await this.record(agentId, sender.clientId, entry, existing === null);
      if (unlogged) return unlogged;
    }
    return admitted;
  }

  /**
   * Delivers to the runtime the intake picked (and maybe handed the message to); only where it did
   * not pick (no script: memory, Redis Cluster; a retry; after a wait) does rendezvous hashing of the
   * sender's sub pick here. A runtime that vanished between presence and delivery is skipped and
   * the next one by hash takes over. The runtime's replica marks the record delivered on its ack
   * ({@link RuntimeDeliveries.mark}).
   */
  private async deliver(admitted: Admitted): Promise<'acked' | 'timeout' | 'gone'> {
    const { config } = this.ctx;
    let { runtimes, handed, picked } = admitted;
    for (;;) {
      while (runtimes.length > 0) {
        const target = handed?.target ?? picked ?? pickByRendezvousSeed(admitted.seed, runtimes, runtimeKey)!;
        const result = await (handed?.result ??
          this.dispatcher.deliver(target, admitted.message, config.AGENT_ACK_TIMEOUT_MS, admitted.delivery));
        handed = null;
        picked = undefined;
        if (result !== 'gone') return result;
        runtimes = runtimes.filter((r) => r !== target);
      }
      // Every runtime it knew of was gone: the bot is restarting, its replica died, or a runtime was
      // in presence before its connection completed. Look again (after a pause) until the grace ends.
      admitted.deadline ??= Date.now() + config.AGENT_RECONNECT_GRACE_MS;
      runtimes = await this.grace.waitForRuntime(admitted.agentId, admitted.deadline);
      if (runtimes.length === 0) return 'gone';
    }
  }

  /** A runtime has the message: counted, echoed to the sender's other tabs, shown to consoles, acked. */
  private acked({ agentId, sender, room, entry, delivery, deadline, subscribers, control }: Admitted): SendAck {
    this.toAgent.add();
    // After a wait for a runtime the count is old: a tab may have opened elsewhere meanwhile.
    this.echo(room, sender, entry, deadline === undefined ? subscribers : null);
    this.feed.message(agentId, sender.clientId, entry, control !== 'bot');
    return { ok: true, id: delivery.record.id, ts: delivery.record.ts };
  }

  /**
   * Logs a reply, then sends it to every socket of one clientId of the bot, or to all its clients
   * with `'*'`. Rejects with {@link DeliveryBudgetError} when the bot's delivery budget on this
   * replica is spent, with {@link LogUnavailableError} when it could not be logged, and with
   * QuotaExceededError (store/bot-quota.ts) when the bot's storage quota refused it, and with
   * {@link ControlConflictError} when an operator holds the conversation (docs/handoff.md): in each
   * case nothing is logged or sent. A broadcast reaches every client but those of conversations an
   * operator holds.
   */
  async publish(agentId: string, reply: AgentReply): Promise<{ id: string; ts: string }> {
    const broadcast = reply.to === BROADCAST_TO;
    // Without the log, nothing reads who answers in the same step: read it first.
    const control = broadcast || this.messageLog.enabled ? null : await this.control.read(agentId, reply.to);
    if (control?.state === 'human') throw new ControlConflictError('CONVERSATION_HELD', control);
    // A broadcast skips the conversations a person holds (docs/handoff.md).
    const held = broadcast ? await this.control.heldClients(agentId) : [];
    this.deliveries.charge(agentId, reply.to);
    const { id, ts } = this.stamps.next();
    const message = botMessage({ id, ts, agentId }, reply, reply.replyTo);
    const room = broadcast ? Rooms.clients(agentId) : Rooms.client(agentId, reply.to);
    // Where the log can, it publishes the message to other replicas with its append: one round trip.
    // The publication with the append names no exceptions: with held conversations to skip, the hub emits it.
    const publication = this.messageLog.enabled && held.length === 0 ? this.ctx.frames.message(room) : null;
    let published: boolean;
    let state: ControlState = control?.state ?? 'bot';
    try {
      if (broadcast) published = await this.messageLog.record(agentId, null, message, true, publication);
      else if (!this.messageLog.enabled) published = false;
      else ({ published, control: state } = await this.messageLog.recordReply(agentId, reply.to, message, publication));
    } catch (err) {
      if (err instanceof ConversationHeldError) throw new ControlConflictError('CONVERSATION_HELD', err.record);
      if (err instanceof QuotaExceededError) this.ctx.metrics.quotaExceeded.inc({ limit: err.limit });
      throw err;
    }
    // Published with the append, this replica's sockets included: they get it in log order, after
    // everything appended before it (see RoomFrames in cluster/frames.ts). Otherwise none of them while the
    // subscriptions have a gap: one given this message would skip, on its reconnect, the replay of
    // those that passed the replica by (it resumes after the newest it saw).
    if (!published) {
      const target = toRoom(this.nsp.client, room, this.ctx.subscriptionsIntact());
      (held.length === 0 ? target : target.except(held.map((clientId) => Rooms.client(agentId, clientId)))).emit(Events.message, message);
    }
    if (!broadcast) {
      this.activity.reached(agentId, reply.to);
      this.feed.message(agentId, reply.to, message, state === 'waiting');
    }
    this.toClients.add();
    return { id: message.id, ts: message.ts };
  }

  /** Logs a client message (`fresh`: not a retry); an error ack when it could not be (then it must not be delivered). */
  private async record(
    agentId: string,
    clientId: string,
    message: ClientInboundMessage,
    fresh: boolean,
  ): Promise<(SendAck & { ok: false }) | null> {
    try {
      await this.messageLog.record(agentId, clientId, message, fresh);
      return null;
    } catch (err) {
      if (err instanceof QuotaExceededError) {
        this.ctx.metrics.quotaExceeded.inc({ limit: err.limit });
        return errorAck('QUOTA_EXCEEDED');
      }
      this.ctx.handlerFailures.warn('log-append', err, 'conversation log unavailable; message refused');
      return errorAck('SERVER_UNAVAILABLE');
    }
  }

  /**
   * Shows an accepted client message on the sender's other sockets (tabs), on every replica. Most
   * users have one tab: nothing is sent then, and a message goes through Redis only when another
   * replica holds a tab (or when that cannot be told: `subscribers` null in a cluster).
   */
  private echo(room: string, sender: Sender, message: ClientInboundMessage, subscribers: number | null): void {
    const here = this.nsp.client.adapter.rooms.get(room);
    const sockets = here?.size ?? 0;
    const othersHere = sockets - (sender.socketId !== undefined && here?.has(sender.socketId) ? 1 : 0) > 0;
    // This replica is subscribed to the room's channel (counted once) while it holds one of its sockets.
    const elsewhere = this.ctx.clustered && (subscribers === null || subscribers > (sockets > 0 ? 1 : 0));
    if (!othersHere && !elsewhere) return;
    // The other tabs here get it from the log after their reconnect (see publish).
    const intact = this.ctx.subscriptionsIntact();
    if (!elsewhere && !intact) return;
    const target = elsewhere ? toRoom(this.nsp.client, room, intact) : this.nsp.client.local.to(room);
    (sender.socketId === undefined ? target : target.except(sender.socketId)).emit(Events.message, message);
  }

  /** Sends a trace to the bot's admin sockets, and no one else. */
  debug(agentId: string, trace: unknown, clientId?: string): void {
    const event: DebugTrace = { agentId, ...(clientId === undefined ? {} : { clientId }), trace, ts: isoNow() };
    this.nsp.client.to(Rooms.admins(agentId)).emit(Events.debug, event);
    this.feed.debug(event);
    this.ctx.metrics.messages.inc({ direction: 'debug' });
  }

  /** A runtime entered presence on this replica, making `count`: online unless it ended a grace. */
  async runtimeEntered(agentId: string, count: number): Promise<void> {
    const returned = await this.grace.runtimeArrived(agentId, count).catch(() => false);
    if (count === 1 && !returned) this.statuses.announce(agentId, true);
  }

  /**
   * Shared presence changed for the bot (a runtime left here with none left, or the cluster's
   * presence keeper found its last runtimes expired or back): offline only once the grace ends.
   */
  presenceChanged(agentId: string, online: boolean): void {
    if (online) this.statuses.announce(agentId, true);
    else this.grace.lastRuntimeLeft(agentId);
  }

  /** Ends the grace timers and waiting messages; the hub calls it on close. */
  stop(): void {
    this.grace.stop();
    this.activity.stop();
  }

  /**
   * Checks a message's content against the bounds of docs/parts.md (size, part count, each part's
   * schema, who may send which part): the content as it is kept and sent, or the error ack.
   */
  checkContent(given: MessageContent, author: 'agent' | 'user'): { content: MessageContent } | (SendAck & { ok: false }) {
    const { MAX_MESSAGE_BYTES: maxBytes, MESSAGE_MAX_PARTS: maxParts } = this.ctx.config;
    const checked = checkContent(given, { maxBytes, maxParts }, author);
    return 'content' in checked ? checked : errorAck(checked.code, checked.message);
  }
}

const USER_LIMITED = 'this user sends this bot more than USER_MESSAGE_RATE_PER_S over all their sockets; retry later';

function runtimeKey(runtime: RuntimeEntry): string {
  return runtime.socketId;
}
