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
import type { RuntimeDispatcher } from '../dispatcher';
import { isoNow } from '../ids';
import type { ClientSocketData, RelayContext, RelayNamespaces } from '../relay.context';
import { pickByRendezvous } from '../rendezvous';
import { Rooms } from '../rooms';
import type { StreamService } from './stream.service';

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
  constructor(
    private readonly ctx: RelayContext,
    private readonly nsp: RelayNamespaces,
    private readonly dispatcher: RuntimeDispatcher,
    private readonly streams: StreamService,
  ) {}

  async decide(user: ClientSocketData, request: ApprovalRequest): Promise<ApprovalAck> {
    const { agentId, clientId, sub } = user;
    const { config, store } = this.ctx;
    const found = await this.find(agentId, clientId, request);
    if (!found) return errorAck('MESSAGE_NOT_FOUND');
    if (Date.now() - Date.parse(found.message.ts) > config.APPROVAL_TTL_S * 1000) return errorAck('APPROVAL_EXPIRED');
    const ref: ApprovalRef = { agentId, messageId: request.messageId, approvalId: request.approvalId };
    const given: ApprovalDecision = { approved: request.approved, decidedBy: clientId, ts: isoNow() };
    if (request.reason !== undefined) given.reason = request.reason;
    const recorded = await store.approvals.decide(ref, given, config.APPROVAL_TTL_S);
    const { decision } = recorded;
    if (decision.approved !== request.approved) return { ...errorAck('APPROVAL_DECIDED'), decision };
    // Shown by the first decider only: two tabs deciding at once both find the part undecided, and
    // each showing it would give every tab the same change twice (under two seqs).
    const part = found.parts[found.index] as ToolPart;
    if (recorded.first && part.approval?.approved === undefined) await this.show(found, clientId, decided(part, decision));
    if (recorded.delivered) return { ok: true, decision };
    const event: AgentApproval = {
      id: request.approvalId,
      messageId: request.messageId,
      toolCallId: part.toolCallId,
      from: clientId,
      approved: decision.approved,
      ts: decision.ts,
    };
    if (decision.reason !== undefined) event.reason = decision.reason;
    // One delivery at a time: another tab's call delivering it now answers this one's retry.
    if (!(await store.approvals.claimDelivery(ref, config.AGENT_ACK_TIMEOUT_MS + CLAIM_MARGIN_MS))) {
      return errorAck('TIMEOUT', IN_FLIGHT);
    }
    const result = await this.deliver(agentId, sub, found.owner, event);
    if (result !== 'acked') {
      await store.approvals.releaseDelivery(ref).catch(() => {});
      return errorAck(result === 'timeout' ? 'TIMEOUT' : 'AGENT_OFFLINE');
    }
    await store.approvals.markDelivered(ref, config.APPROVAL_TTL_S).catch((err: unknown) => {
      this.ctx.handlerFailures.warn('approval-mark', err, 'could not record an approval delivery (a retry would deliver it again)');
    });
    return { ok: true, decision };
  }

  /** The tool part asking for `approvalId` in the user's conversation: in the open stream, else in the log. */
  private async find(agentId: string, clientId: string, request: ApprovalRequest): Promise<Found | null> {
    const open = await this.streams.find(agentId, request.messageId);
    let found: Omit<Found, 'index'> | null = null;
    if (open) {
      if (open.clientId !== clientId) return null;
      found = { message: open.message, parts: open.parts, owner: open.owner };
    } else if (this.ctx.config.HISTORY_ENABLED) {
      const logged = await this.ctx.store.conversations.findBotMessage(agentId, clientId, request.messageId);
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
      const final = await this.ctx.store.conversations.findBotMessage(agentId, clientId, id);
      if (!final) return;
      found = { message: final, parts: partsOf(final), index: found.index, owner: null };
    }
    const parts = [...found.parts];
    parts[found.index] = part;
    const message: LoggedMessage = { ...found.message };
    const shown = plainOrParts(parts);
    if (shown) message.parts = shown;
    await this.ctx.store.conversations.replaceBotMessage(agentId, clientId, message);
    this.nsp.client.to(Rooms.client(agentId, clientId)).emit(Events.messagePart, { id, seq: 0, index: found.index, part });
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

/** Beyond the runtime's ack timeout, what a delivery's claim allows for the hops between replicas. */
const CLAIM_MARGIN_MS = 2000;
const IN_FLIGHT = 'this decision is being delivered to the bot by another call (another tab); retry to learn when it arrived';

/** The tool part with the user's decision: `approval-responded` when it was waiting for one. */
function decided(part: ToolPart, decision: ApprovalDecision): ToolPart {
  const approval = { ...part.approval!, approved: decision.approved, decidedBy: decision.decidedBy, ts: decision.ts };
  if (decision.reason !== undefined) approval.reason = decision.reason;
  return { ...part, state: part.state === 'approval-requested' ? 'approval-responded' : part.state, approval };
}
