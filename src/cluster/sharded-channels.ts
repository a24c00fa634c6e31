import type Redis from 'ioredis';

type Handler = (message: Buffer) => void;

/**
 * This replica's own sharded pub/sub channels (dispatch requests and replies, the canary) on the
 * subscriber connection the Socket.IO adapter also uses, so a probe through them tests the
 * adapter's path too.
 */
export class ShardedChannels {
  private readonly handlers = new Map<string, Handler>();

  constructor(private readonly sub: Redis) {
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
    return channels.length > 0 && this.sub.status === 'ready' ? this.sub.sunsubscribe(...channels).catch(() => {}) : Promise.resolve();
  }
}
