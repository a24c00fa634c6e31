import {
  errorAck,
  Events,
  partsOf,
  plainOrParts,
  type AgentApproval,
  type ApprovalAck,
  type ApprovalDecision,
  type ApprovalRequest,
  type MessagePart,
  type ToolPart,
} from '../../protocol';
import type { ApprovalRef } from '../../store/approval-store';
import type { LoggedMessage } from '../../store/conversation-log';
import type { RuntimeEntry } from '../../store/store';
import type { RuntimeDispatcher, SocketDelivery } from '../dispatcher';
import { isoNow } from '../ids';
import type { RelayContext, RelayNamespaces } from '../relay.context';
import { pickByRendezvous } from '../rendezvous';
import { Rooms } from '../rooms';
import type { StreamService } from './stream.service';

/**
 * Who decides: the conversation (`agentId`, `clientId`, whose user's `sub` seeds rendezvous) and
 * what the decision's `decidedBy` shows: the user's clientId, or an operator's name.
 */
export interface Decider {
  agentId: string;
  clientId: string;
  sub: string;
  decidedBy: string;
}

/** How a delivery of a decision ended; `claimed`: another replica's call is delivering it. */
type Delivery = SocketDelivery | 'claimed';
type Send = (event: AgentApproval) => Promise<SocketDelivery>;

/** Where the approval request was found: an open stream (and its owner), or the log. */
interface Found {
  message: LoggedMessage;
  parts: MessagePart[];
  index: number;
  /** The runtime socket that owns the stream, while it is open. */
  owner: string | null;
}

/**
 * Users' decisions on the approval requests of bots' tool calls (docs/parts.md, "Approvals"): the
 * first is recorded in shared state, shown to every tab, and delivered to a runtime of the bot
 * with an ack, as a client message is (to the stream's runtime while it is open, else to the one
 * rendezvous picks for the user). A decision a runtime did not ack stays recorded; the client's
 * retry delivers it, and one acked before is acked at once.
 */
export class Approvals {
  /** Deliveries under way on this replica, by decision. */
  private readonly delivering = new Map<string, Promise<Delivery>>();

  constructor(
    private readonly ctx: RelayContext,
    private readonly nsp: RelayNamespaces,
    private readonly dispatcher: RuntimeDispatcher,
    private readonly streams: StreamService,
  ) {}

  /** Decides for `decider`: the conversation's user, or an operator of the bot (docs/handoff.md). */
  async decide(decider: Decider, request: ApprovalRequest): Promise<ApprovalAck> {
    const { agentId, clientId, sub, decidedBy } = decider;
    const { config, store } = this.ctx;
    const found = await this.find(agentId, clientId, request);
    if (!found) return errorAck('MESSAGE_NOT_FOUND', config.HISTORY_ENABLED ? undefined : WITHOUT_HISTORY);
    if (Date.now() - Date.parse(found.message.ts) > config.APPROVAL_TTL_S * 1000) return errorAck('APPROVAL_EXPIRED');
    const ref: ApprovalRef = { agentId, messageId: request.messageId, approvalId: request.approvalId };
    const given: ApprovalDecision = { approved: request.approved, decidedBy, ts: isoNow() };
    if (request.reason !== undefined) given.reason = request.reason;
    const part = found.parts[found.index] as ToolPart;
    // Kept with the decision until a runtime acks it: one that connects later gets it (redeliver).
    const recorded = await store.approvals.decide(ref, given, config.APPROVAL_TTL_S, deliveryOf(ref, part, clientId, given));
    const { decision } = recorded;
    if (decision.approved !== request.approved) return { ...errorAck('APPROVAL_DECIDED'), decision };
    // Shown by the first decider only: two tabs deciding at once both find the part undecided, and
    // each showing it would give every tab the same change twice (under two seqs).
    if (recorded.first && part.approval?.approved === undefined) await this.show(found, clientId, decided(part, decision));
    if (recorded.delivered) return { ok: true, decision };
    const result = await this.deliverOnce(ref, deliveryOf(ref, part, clientId, decision), (event) =>
      this.deliver(agentId, sub, found.owner, event),
    );
    // One delivery at a time: another tab's call delivering it now answers this one's retry.
    if (result === 'claimed') return errorAck('TIMEOUT', IN_FLIGHT);
    if (result !== 'acked') return errorAck(result === 'timeout' ? 'TIMEOUT' : 'AGENT_OFFLINE');
    return { ok: true, decision };
  }

  /**
   * A runtime of the bot connected: the decisions no runtime acked yet (recorded while none was
   * connected, or whose delivery was not acked) go to it, one at a time, each claimed as a user's
   * call claims it, so the bot gets each once (and its SDK drops a repeated id).
   */
  async redeliver(agentId: string, socketId: string): Promise<void> {
    const { ctx } = this;
    const target: RuntimeEntry = { socketId, replicaId: ctx.replicaId };
    try {
      for (const event of await ctx.store.approvals.undelivered(agentId, REDELIVER_BATCH)) {
        const ref: ApprovalRef = { agentId, messageId: event.messageId, approvalId: event.id };
        const result = await this.deliverOnce(ref, event, (e) =>
          this.dispatcher.deliver(target, e, ctx.config.AGENT_ACK_TIMEOUT_MS, null, Events.approval),
        );
        // The runtime left or does not answer: the next one to connect gets the rest.
        if (result === 'gone' || result === 'timeout') return;
      }
    } catch (err) {
      ctx.handlerFailures.warn('approval-redeliver', err, 'could not redeliver approval decisions to a runtime that connected');
    }
  }

  /**
   * Delivers a recorded decision unless another call is delivering it (`claimed`); marks it
   * delivered once acked. A delivery under way on this replica (a runtime that just connected
   * getting it, another tab's call) is waited for rather than answered `claimed`.
   */
  private async deliverOnce(ref: ApprovalRef, event: AgentApproval, send: Send): Promise<Delivery> {
    const at = `${ref.agentId} ${ref.messageId} ${ref.approvalId}`;
    const running = this.delivering.get(at);
    if (running && (await running) === 'acked') return 'acked';
    const attempt = this.attempt(ref, event, send);
    this.delivering.set(at, attempt);
    try {
      return await attempt;
    } finally {
      if (this.delivering.get(at) === attempt) this.delivering.delete(at);
    }
  }

  private async attempt(ref: ApprovalRef, event: AgentApproval, send: Send): Promise<Delivery> {
    const { config, store } = this.ctx;
    if (!(await store.approvals.claimDelivery(ref, config.AGENT_ACK_TIMEOUT_MS + CLAIM_MARGIN_MS))) return 'claimed';
    const result = await send(event);
    if (result !== 'acked') {
      await store.approvals.releaseDelivery(ref).catch(() => {});
      return result;
    }
    await store.approvals.markDelivered(ref, config.APPROVAL_TTL_S).catch((err: unknown) => {
      this.ctx.handlerFailures.warn('approval-mark', err, 'could not record an approval delivery (a retry would deliver it again)');
    });
    return 'acked';
  }

  /** The tool part asking for `approvalId` in the user's conversation: in the open stream, else in the log. */
  private async find(agentId: string, clientId: string, request: ApprovalRequest): Promise<Found | null> {
    const open = await this.streams.find(agentId, request.messageId);
    let found: Omit<Found, 'index'> | null = null;
    if (open) {
      if (open.clientId !== clientId) return null;
      found = { message: open.message, parts: open.parts, owner: open.owner };
    } else if (this.ctx.config.HISTORY_ENABLED) {
      const logged = await this.ctx.store.log.findBotMessage(agentId, clientId, request.messageId);
      if (logged && !logged.streaming) found = { message: logged, parts: partsOf(logged), owner: null };
    }
    if (!found) return null;
    const index = found.parts.findIndex((p) => p.type === 'tool' && p.approval?.id === request.approvalId);
    return index === -1 ? null : { ...found, index };
  }

  /**
   * Puts the decided part in the message for every tab and later reads: a change of the open stream
   * (with its seq), else the message as the log keeps it, with `message:part` seq 0.
   */
  private async show(found: Found, clientId: string, part: ToolPart): Promise<void> {
    const { agentId, id } = found.message;
    if (found.owner !== null) {
      const seq = await this.streams.decideInStream({ agentId, id, clientId }, found.index, part);
      if (seq !== null) return;
      // Ended meanwhile: its final is in the log now.
      const final = await this.ctx.store.log.findBotMessage(agentId, clientId, id);
      if (!final) return;
      found = { message: final, parts: partsOf(final), index: found.index, owner: null };
    }
    const parts = [...found.parts];
    parts[found.index] = part;
    const message: LoggedMessage = { ...found.message };
    const shown = plainOrParts(parts);
    if (shown) message.parts = shown;
    await this.ctx.store.log.replaceBotMessage(agentId, clientId, message);
    const event = { id, seq: 0, index: found.index, part };
    this.nsp.client.to(Rooms.client(agentId, clientId)).emit(Events.messagePart, event);
    this.streams.feed.stream(agentId, clientId, Events.messagePart, event);
  }

  /**
   * Delivers the decision to the stream's runtime while it is connected, else to the runtime
   * rendezvous picks for the user, skipping runtimes that left: `gone` when none took it.
   */
  private async deliver(agentId: string, sub: string, owner: string | null, event: AgentApproval): Promise<'acked' | 'timeout' | 'gone'> {
    let runtimes = await this.ctx.store.presence.listRuntimes(agentId);
    for (;;) {
      const target: RuntimeEntry | undefined =
        runtimes.find((r) => r.socketId === owner) ?? pickByRendezvous(sub, runtimes, (r) => r.socketId);
      if (!target) return 'gone';
      const result = await this.dispatcher.deliver(target, event, this.ctx.config.AGENT_ACK_TIMEOUT_MS, null, Events.approval);
      if (result === 'acked') return 'acked';
      if (result === 'timeout') return 'timeout';
      runtimes = runtimes.filter((r) => r !== target);
    }
  }
}

/** Without the log, a message's parts live only in its open stream (docs/parts.md, "Without history"). */
const WITHOUT_HISTORY =
  'no open stream of yours asks for this approval; with HISTORY_ENABLED=false a decision is taken only while the stream that asked is open';

/** Decisions a connecting runtime is handed at most (more wait for the next runtime to connect, or the user's retry). */
const REDELIVER_BATCH = 100;

/** The decision as the bot gets it (H→A `approval`). */
function deliveryOf(ref: ApprovalRef, part: ToolPart, from: string, decision: ApprovalDecision): AgentApproval {
  const event: AgentApproval = {
    id: ref.approvalId,
    messageId: ref.messageId,
    toolCallId: part.toolCallId,
    from,
    approved: decision.approved,
    ts: decision.ts,
  };
  if (decision.reason !== undefined) event.reason = decision.reason;
  return event;
}

/** Beyond the runtime's ack timeout, what a delivery's claim allows for the hops between replicas. */
const CLAIM_MARGIN_MS = 2000;
const IN_FLIGHT = 'this decision is being delivered to the bot by another call (another tab); retry to learn when it arrived';

/** The tool part with the user's decision: `approval-responded` when it was waiting for one. */
function decided(part: ToolPart, decision: ApprovalDecision): ToolPart {
  const approval = { ...part.approval!, approved: decision.approved, decidedBy: decision.decidedBy, ts: decision.ts };
  if (decision.reason !== undefined) approval.reason = decision.reason;
  return { ...part, state: part.state === 'approval-requested' ? 'approval-responded' : part.state, approval };
}
