import type { AgentApproval, RuntimeAck } from '../../protocol';
import type { RecentIds } from './recent-ids';

/** A user's decision on a tool call the bot asked to approve; the hub redelivers it until the handler settled. */
export type ApprovalHandler = (approval: AgentApproval) => void | Promise<void>;

/**
 * The users' decisions on tool calls (H→A `approval`, docs/agent-sdk.md, approvals): each is handed
 * to the handler once per approval id and acked once the handler settled, and passed to the tool
 * call of this runtime that awaits it (`ToolCall.decision()`).
 */
export class ApprovalInbox {
  handler: ApprovalHandler = () => {};
  /** Approvals whose handler runs: a redelivery is acked when it settles, not before. */
  private readonly deciding = new Map<string, Promise<void>>();
  /** Decisions awaited by a tool call of this runtime (`ToolCall.decision()`), by approval id. */
  private readonly awaited = new Map<string, (approval: AgentApproval) => void>();

  constructor(
    /** The runtime's handled ids: an approval handled once is acked and dropped when it comes again. */
    private readonly handled: RecentIds,
    private readonly report: (err: Error) => void,
  ) {}

  /** The decision on approval `id`, once this runtime receives it. */
  decision(id: string): Promise<AgentApproval> {
    return new Promise((resolve) => this.awaited.set(id, resolve));
  }

  /** H→A `approval`: handed to the handler once per id, acked once it settled. */
  receive(approval: AgentApproval, ack: ((res: RuntimeAck) => void) | undefined): void {
    const respond = () => (typeof ack === 'function' ? ack({ ok: true }) : undefined);
    const id = approval?.id;
    if (typeof id !== 'string') return respond();
    const running = this.deciding.get(id);
    if (running) return void running.then(respond);
    if (this.handled.seen(id)) return respond();
    this.awaited.get(id)?.(approval);
    this.awaited.delete(id);
    const settled = Promise.resolve()
      .then(() => this.handler(approval))
      .catch((err: unknown) => this.report(err instanceof Error ? err : new Error(String(err))))
      .finally(() => this.deciding.delete(id));
    this.deciding.set(id, settled);
    void settled.then(respond);
  }

  /** Forgets the decisions awaited (the runtime closed). */
  clear(): void {
    this.awaited.clear();
  }
}
