import { Cluster } from 'ioredis';
import type { RedisClient } from '../store/redis/redis-client';

type Handler = (message: Buffer) => void;

/**
 * This replica's own sharded pub/sub channels (dispatch requests and replies, the canary) on the
 * subscriber connection the Socket.IO adapter also uses, so a probe through them tests the
 * adapter's path too.
 */
export class ShardedChannels {
  private readonly handlers = new Map<string, Handler>();

  constructor(private readonly sub: RedisClient) {
    sub.on('smessageBuffer', (channel: Buffer, message: Buffer) => this.handlers.get(channel.toString())?.(message));
  }

  subscribe(channel: string, handler: Handler): void {
    this.handlers.set(channel, handler);
    this.sub.ssubscribe(channel).catch(() => {});
  }

  /** Channels to (re)subscribe after the subscription was lost. */
  channels(): string[] {
    return [...this.handlers.keys()];
  }

  unsubscribeAll(): Promise<unknown> {
    const channels = this.channels();
    this.handlers.clear();
    if (channels.length === 0 || this.sub.status !== 'ready') return Promise.resolve();
    return Promise.all(bySlot(this.sub, channels).map((group) => this.sub.sunsubscribe(...group).catch(() => {})));
  }
}

/**
 * `channels` in groups one SSUBSCRIBE/SUNSUBSCRIBE can carry: all of them on one server, one per
 * channel on a Cluster (a sharded pub/sub command may only name channels of one slot).
 */
export function bySlot(client: RedisClient, channels: string[]): string[][] {
  return client instanceof Cluster ? channels.map((c) => [c]) : [channels];
}
