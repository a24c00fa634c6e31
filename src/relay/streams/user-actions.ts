import {
  errorAck,
  Events,
  type AgentFeedback,
  type AgentStop,
  type ApprovalAck,
  type ApprovalRequest,
  type FeedbackRequest,
  type MessageFeedback,
  type OkAck,
  type OperatorApprovalRequest,
  type StopRequest,
} from '../../protocol';
import type { RuntimeEntry } from '../../store/store';
import { isoNow } from '../ids';
import type { ClientSocketData, RelayContext, RelayNamespaces } from '../relay.context';
import { pickByRendezvous } from '../rendezvous';
import type { RuntimeDispatcher } from '../dispatcher';
import { Approvals } from './approvals';
import type { StreamService } from './stream.service';
import type { UserBudgets } from '../user-budgets';

const ACTIONS_LIMITED =
  "this user's feedback, stops and approval decisions over all their sockets are past USER_MESSAGE_RATE_PER_S; retry later";

/**
 * What a user does to the bot's answers (docs/streaming.md, docs/parts.md): stop one (by its id, or
 * by the user's own message it answers, so stop works before the stream exists), rate one, decide
 * on its tool calls' approval requests. Stops and ratings reach the runtime through its socket's
 * own room, on whatever replica holds it; decisions are delivered with an ack.
 * All three spend the user's budget (USER_MESSAGE_RATE_*, over all their sockets), before anything is
 * read or written.
 */
export class UserActions {
  private readonly approvals: Approvals;

  constructor(
    private readonly ctx: RelayContext,
    private readonly nsp: RelayNamespaces,
    private readonly streams: StreamService,
    dispatcher: RuntimeDispatcher,
    private readonly budgets: UserBudgets,
  ) {
    this.approvals = new Approvals(ctx, nsp, dispatcher, streams);
  }

  /** A runtime of the bot connected on this replica: it gets the decisions no runtime acked yet. */
  runtimeConnected(agentId: string, socketId: string): void {
    void this.approvals.redeliver(agentId, socketId);
  }

  approval(user: ClientSocketData, request: ApprovalRequest): Promise<ApprovalAck> {
    if (!this.budgets.act(user.sub)) return Promise.resolve(errorAck('RATE_LIMITED', ACTIONS_LIMITED));
    return this.approvals.decide({ agentId: user.agentId, clientId: user.clientId, sub: user.sub, decidedBy: user.clientId }, request);
  }

  /**
   * An operator's decision in one of the bot's conversations (docs/handoff.md): as the user's, with
   * the operator's name as `decidedBy`. The operator's socket is limited to its bot by its handshake.
   */
  operatorApproval(agentId: string, operatorName: string, { clientId, ...request }: OperatorApprovalRequest): Promise<ApprovalAck> {
    // A user's clientId is their sub (the admins' reserved one aside, which has no bot conversation to decide in).
    return this.approvals.decide({ agentId, clientId, sub: clientId, decidedBy: operatorName }, request);
  }

  async stop(user: ClientSocketData, request: StopRequest): Promise<OkAck> {
    const { agentId, clientId, sub } = user;
    if (!this.budgets.act(sub)) return errorAck('RATE_LIMITED', ACTIONS_LIMITED);
    const stops = this.ctx.metrics.streamStops;
    if ('id' in request) return this.stopStream(user, request.id);
    const record = await this.ctx.store.dedupe.find({ agentId, sub, clientMessageId: request.clientMessageId });
    if (!record) {
      stops.inc({ result: 'not_found' });
      return errorAck('STREAM_NOT_FOUND');
    }
    const open = await this.ctx.store.streams.openOf(agentId, clientId);
    const answering = open.find((stream) => stream.message.replyTo === record.id);
    if (answering) return this.stopStream(user, answering.message.id);
    // No stream yet: the runtime that got the message (rendezvous over the live runtimes) is told to stop it.
    const runtime = await this.runtimeFor(agentId, sub);
    if (!runtime) {
      stops.inc({ result: 'not_found' });
      return errorAck('STREAM_NOT_FOUND');
    }
    const stop: AgentStop = { messageId: record.id, from: clientId };
    this.nsp.agent.to(runtime.socketId).emit(Events.stop, stop);
    stops.inc({ result: 'routed' });
    return { ok: true };
  }

  async feedback(user: ClientSocketData, { id, rating, comment }: FeedbackRequest): Promise<OkAck> {
    const { agentId, clientId, sub } = user;
    if (!this.budgets.act(sub)) return errorAck('RATE_LIMITED', ACTIONS_LIMITED);
    const kept: MessageFeedback | null = rating === null ? null : { rating, ...(comment === undefined ? {} : { comment }), ts: isoNow() };
    const found = this.ctx.config.HISTORY_ENABLED && (await this.ctx.store.log.setFeedback(agentId, clientId, id, kept));
    if (!found) return errorAck('MESSAGE_NOT_FOUND');
    this.ctx.metrics.feedback.inc({ rating: rating ?? 'none' });
    // Best effort: the rating is kept whether or not a runtime hears of it.
    const runtime = await this.runtimeFor(agentId, sub).catch(() => undefined);
    if (runtime) {
      const event: AgentFeedback = { id, from: clientId, rating, ...(comment === undefined ? {} : { comment }) };
      this.nsp.agent.to(runtime.socketId).emit(Events.feedback, event);
    }
    return { ok: true };
  }

  /** Stops an open stream of the user's conversation; another user's (or an unknown) one is not found. */
  private async stopStream({ agentId, clientId }: ClientSocketData, id: string): Promise<OkAck> {
    const open = await this.streams.find(agentId, id);
    if (!open || open.clientId !== clientId) {
      this.ctx.metrics.streamStops.inc({ result: 'not_found' });
      return errorAck('STREAM_NOT_FOUND');
    }
    const stop: AgentStop = { id, from: clientId };
    this.nsp.agent.to(open.owner).emit(Events.stop, stop);
    this.streams.cancelAfterGrace({ agentId, id });
    this.ctx.metrics.streamStops.inc({ result: 'routed' });
    return { ok: true };
  }

  /**
   * Stops every open stream of a conversation, as if its user pressed Stop: an operator took it
   * over (docs/handoff.md), so an answer under way must not keep reaching the user.
   */
  async stopConversation(agentId: string, clientId: string): Promise<void> {
    for (const open of await this.ctx.store.streams.openOf(agentId, clientId)) {
      const stop: AgentStop = { id: open.message.id, from: clientId };
      this.nsp.agent.to(open.owner).emit(Events.stop, stop);
      this.streams.cancelAfterGrace({ agentId, id: open.message.id });
    }
  }

  private async runtimeFor(agentId: string, sub: string): Promise<RuntimeEntry | undefined> {
    return pickByRendezvous(sub, await this.ctx.store.presence.listRuntimes(agentId), (r) => r.socketId);
  }
}
