import { randomUUID } from 'node:crypto';
import type { RedisClient } from '../store/redis/redis-client';
import type { Namespace } from 'socket.io';
import {
  LocalDispatcher,
  type DeliveryRecord,
  type DeliveryResult,
  type PreparedDelivery,
  type RuntimeDeliveries,
  type SocketDelivery,
  type RuntimeDispatcher,
  type RuntimeEvent,
} from '../relay/dispatcher';
import type { AgentApproval, AgentInboundMessage } from '../protocol';
import { fill, type Template } from '../store/json-frames';
import type { Handoff, RuntimeEntry } from '../store/store';
import type { RedisErrorReporter } from './redis-connections';
import type { ShardedChannels } from './sharded-channels';
import { DeadlineQueue, type Deadline } from '../relay/deadline-queue';
import { handoffRequest, parseResponse, requestFrame, responseFrame, splitRequest, type RequestEnvelope } from './frames';

/** Extra wait for a remote ack beyond AGENT_ACK_TIMEOUT_MS: two hops through Redis. */
const NETWORK_MARGIN_MS = 1000;

/**
 * A request awaiting its response: settled by the response, by the replica finding it undeliverable,
 * or at its deadline. It has no timer of its own: every pending request shares the dispatcher's
 * deadline queue. Settling again does nothing.
 */
class PendingResponse implements Deadline {
  dueMs = 0;
  slot = -1;
  readonly result: Promise<DeliveryResult>;
  private resolve!: (result: DeliveryResult) => void;

  /** Registers itself in `pending` (by id) and `deadlines`, due in `waitMs`; leaves both as it settles. */
  constructor(
    readonly id: string,
    private readonly pending: Map<string, PendingResponse>,
    private readonly deadlines: DeadlineQueue,
    waitMs: number,
  ) {
    this.result = new Promise<DeliveryResult>((resolve) => (this.resolve = resolve));
    pending.set(id, this);
    deadlines.add(this, Date.now() + waitMs);
  }

  /** A response that comes later (after the deadline) finds nothing waiting. */
  settle(result: DeliveryResult): void {
    this.pending.delete(this.id);
    this.deadlines.remove(this);
    this.resolve(result);
  }

  fire(): void {
    this.settle('timeout');
  }

  /**
   * The request went out to `receivers` subscribers: none means that replica is gone (its presence
   * entries have not expired yet).
   */
  published(receivers: number): Promise<DeliveryResult> {
    if (receivers === 0) this.settle('gone');
    return this.result;
  }
}

/** A request the store's intake may publish ({@link PreparedDelivery}). */
class PreparedRequest implements PreparedDelivery {
  constructor(
    readonly handoff: Handoff,
    private readonly pending: PendingResponse,
  ) {}

  handedOff(receivers: number): Promise<DeliveryResult> {
    return this.pending.published(receivers);
  }

  cancel(): void {
    this.pending.settle('gone');
  }
}

/**
 * Delivers to the replica that holds the chosen runtime (presence names it): locally when that is
 * this replica, else a request on the target replica's own sharded channel, answered on this
 * replica's channel. Two Redis messages per delivery, each received by one replica, whatever the
 * number of replicas. Where scripts may publish on those channels (one Redis server or Sentinel:
 * they live beside the bot's keys; `handoff` is true then), the store's intake script publishes the
 * first request itself. The runtime's replica sends the dedupe record's delivered mark just ahead of
 * the ack ({@link RuntimeDeliveries.mark}), in the same write: the requesting replica, once it has
 * the ack, neither waits for nor sends a write of its own.
 */
export class ClusterDispatcher implements RuntimeDispatcher {
  private readonly local: LocalDispatcher;
  private readonly pending = new Map<string, PendingResponse>();
  private readonly deadlines = new DeadlineQueue();
  private readonly serving = new Set<Promise<unknown>>();
  private closing = false;

  constructor(
    private readonly replicaId: string,
    private readonly agents: Namespace,
    private readonly deliveries: RuntimeDeliveries,
    private readonly pub: RedisClient,
    channels: ShardedChannels,
    /** A replica's channel is `channel.before + replicaId + channel.after`. */
    private readonly channel: Template,
    private readonly report: RedisErrorReporter,
    /** Whether the store's intake may publish the first request ({@link prepare}). */
    private readonly handoff: boolean,
  ) {
    this.local = new LocalDispatcher(agents, deliveries);
    channels.subscribe(this.channelOf(replicaId), (raw) => this.onMessage(raw));
  }

  async deliver(
    target: RuntimeEntry,
    message: AgentInboundMessage | AgentApproval,
    timeoutMs: number,
    record: DeliveryRecord | null,
    event?: RuntimeEvent,
  ): Promise<DeliveryResult> {
    if (target.replicaId === this.replicaId) return this.local.deliver(target, message, timeoutMs, record, event);
    const pending = this.awaitResponse(timeoutMs);
    let receivers: number;
    try {
      const request = requestFrame(pending.id, this.replicaId, target.socketId, timeoutMs, record, event, message);
      receivers = Number(await this.pub.spublish(this.channelOf(target.replicaId), request));
    } catch (err) {
      pending.settle('timeout');
      this.report('dispatcher', err, 'could not forward a message to another replica');
      throw err;
    }
    return pending.published(receivers);
  }

  prepare(message: AgentInboundMessage, timeoutMs: number, seed: number, record: DeliveryRecord): PreparedDelivery | null {
    if (!this.handoff) return null;
    // The response may come before the intake's own reply: await it from the start.
    const pending = this.awaitResponse(timeoutMs);
    const request = handoffRequest(pending.id, this.replicaId, timeoutMs, record, message);
    return new PreparedRequest({ seed, replicaId: this.replicaId, channel: this.channel, request }, pending);
  }

  /** A request awaiting its response, or 'timeout' after the runtime's timeout and the two hops. */
  private awaitResponse(timeoutMs: number): PendingResponse {
    return new PendingResponse(randomUUID(), this.pending, this.deadlines, timeoutMs + NETWORK_MARGIN_MS);
  }

  private channelOf(replicaId: string): string {
    return fill(this.channel, replicaId);
  }

  /** Answers requests still being served (their acks are in flight), then stops listening. */
  async close(): Promise<void> {
    this.closing = true;
    await Promise.allSettled([...this.serving]);
    for (const pending of [...this.pending.values()]) pending.settle('timeout');
  }

  private onMessage(raw: Buffer): void {
    const frame = raw.toString();
    const split = splitRequest(frame);
    if (split !== null) return this.serve(split.envelope, split.json);
    const response = parseResponse(frame);
    if (response !== null) this.pending.get(response.id)?.settle(response.result);
  }

  /** Serves a request whose message's JSON is `json`, as it came. */
  private serve(request: RequestEnvelope, json: string): void {
    const socket = this.closing ? undefined : this.agents.sockets.get(request.socketId);
    const delivered = socket?.connected
      ? this.deliveries.deliverJson(socket, json, request.timeoutMs, request.event)
      : Promise.resolve<SocketDelivery>('gone');
    const work = delivered.then((result) => this.respond(request, result));
    this.serving.add(work);
    void work.finally(() => this.serving.delete(work));
  }

  private async respond(request: RequestEnvelope, result: SocketDelivery): Promise<void> {
    // The mark first: sent in the same write as the response, ahead of it.
    if (result === 'acked') this.deliveries.mark(request.record ?? null);
    try {
      await this.pub.spublish(this.channelOf(request.from), responseFrame(request.id, result));
    } catch (err) {
      this.report('dispatcher', err, 'could not return a delivery ack to the requesting replica');
    }
  }
}
