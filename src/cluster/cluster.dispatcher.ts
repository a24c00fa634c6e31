import { randomUUID } from 'node:crypto';
import type { RedisClient } from '../store/redis/redis-client';
import type { Namespace } from 'socket.io';
import { LocalDispatcher, type DeliveryResult, type RuntimeDeliveries, type RuntimeDispatcher } from '../relay/dispatcher';
import { Events, type AgentInboundMessage } from '../protocol';
import type { RuntimeEntry } from '../store/store';
import type { RedisErrorReporter } from './redis-connections';
import type { ShardedChannels } from './sharded-channels';

interface DeliveryRequest {
  t: 'req';
  id: string;
  from: string;
  socketId: string;
  message: AgentInboundMessage;
  timeoutMs: number;
}

interface DeliveryResponse {
  t: 'res';
  id: string;
  result: DeliveryResult;
}

/** Extra wait for a remote ack beyond AGENT_ACK_TIMEOUT_MS: two hops through Redis. */
const NETWORK_MARGIN_MS = 1000;

/**
 * Delivers to the replica that holds the chosen runtime (presence names it): locally when that is
 * this replica, else a request on the target replica's own sharded channel, answered on this
 * replica's channel. Two Redis messages per delivery, each received by one replica, whatever the
 * number of replicas.
 */
export class ClusterDispatcher implements RuntimeDispatcher {
  private readonly local: LocalDispatcher;
  private readonly pending = new Map<string, (result: DeliveryResult) => void>();
  private readonly serving = new Set<Promise<unknown>>();
  private closing = false;

  constructor(
    private readonly replicaId: string,
    private readonly agents: Namespace,
    private readonly deliveries: RuntimeDeliveries,
    private readonly pub: RedisClient,
    channels: ShardedChannels,
    private readonly channelOf: (replicaId: string) => string,
    private readonly report: RedisErrorReporter,
  ) {
    this.local = new LocalDispatcher(agents, deliveries);
    channels.subscribe(channelOf(replicaId), (raw) => this.onMessage(raw));
  }

  async deliver(target: RuntimeEntry, message: AgentInboundMessage, timeoutMs: number): Promise<DeliveryResult> {
    if (target.replicaId === this.replicaId) return this.local.deliver(target, message, timeoutMs);
    const id = randomUUID();
    const settled = new Promise<DeliveryResult>((resolve) => {
      const timer = setTimeout(() => settle('timeout'), timeoutMs + NETWORK_MARGIN_MS);
      const settle = (result: DeliveryResult) => {
        clearTimeout(timer);
        this.pending.delete(id);
        resolve(result);
      };
      this.pending.set(id, settle);
    });
    const request: DeliveryRequest = { t: 'req', id, from: this.replicaId, socketId: target.socketId, message, timeoutMs };
    let receivers: number;
    try {
      receivers = Number(await this.pub.spublish(this.channelOf(target.replicaId), JSON.stringify(request)));
    } catch (err) {
      this.pending.get(id)?.('timeout');
      this.report('dispatcher', err, 'could not forward a message to another replica');
      throw err;
    }
    // No subscriber: that replica is gone (its presence entries have not expired yet).
    if (receivers === 0) this.pending.get(id)?.('gone');
    return settled;
  }

  /** Answers requests still being served (their acks are in flight), then stops listening. */
  async close(): Promise<void> {
    this.closing = true;
    await Promise.allSettled([...this.serving]);
    for (const settle of this.pending.values()) settle('timeout');
  }

  private onMessage(raw: Buffer): void {
    let parsed: DeliveryRequest | DeliveryResponse;
    try {
      parsed = JSON.parse(raw.toString()) as DeliveryRequest | DeliveryResponse;
    } catch {
      return;
    }
    if (parsed.t === 'res') this.pending.get(parsed.id)?.(parsed.result);
    else if (parsed.t === 'req') this.serve(parsed);
  }

  private serve(request: DeliveryRequest): void {
    const socket = this.closing ? undefined : this.agents.sockets.get(request.socketId);
    const work = (
      socket?.connected ? this.deliveries.deliver(socket, request.message, request.timeoutMs) : Promise.resolve<DeliveryResult>('gone')
    ).then((result) => this.respond(request, result));
    this.serving.add(work);
    void work.finally(() => this.serving.delete(work));
  }

  private async respond(request: DeliveryRequest, result: DeliveryResult): Promise<void> {
    const response: DeliveryResponse = { t: 'res', id: request.id, result };
    try {
      await this.pub.spublish(this.channelOf(request.from), JSON.stringify(response));
    } catch (err) {
      this.report('dispatcher', err, 'could not return a delivery ack to the requesting replica');
    }
  }
}

/**
 * The alternative measured in bench/adapter-fanout.mjs: Socket.IO's own broadcast-with-ack to the
 * runtime's socket id through the adapter. Every replica receives the request and answers with a
 * client count, so its cost grows with the number of replicas; not used by default.
 */
export class AdapterAckDispatcher implements RuntimeDispatcher {
  private readonly local: LocalDispatcher;

  constructor(
    private readonly replicaId: string,
    private readonly agents: Namespace,
    deliveries: RuntimeDeliveries,
  ) {
    this.local = new LocalDispatcher(agents, deliveries);
  }

  async deliver(target: RuntimeEntry, message: AgentInboundMessage, timeoutMs: number): Promise<DeliveryResult> {
    if (target.replicaId === this.replicaId) return this.local.deliver(target, message, timeoutMs);
    try {
      const acks = (await this.agents.to(target.socketId).timeout(timeoutMs).emitWithAck(Events.message, message)) as unknown[];
      return acks.length > 0 ? 'acked' : 'gone';
    } catch {
      return 'timeout';
    }
  }

  async close(): Promise<void> {}
}
