import { Cluster } from 'ioredis';
import type { RedisClient } from '../store/redis/redis-client';

const SLOTS = 16384;

/** CRC16/XMODEM of `key` modulo 16384: the Redis Cluster slot of a key without a hash tag. */
export function keySlot(key: string): number {
  let crc = 0;
  for (const byte of Buffer.from(key)) {
    crc ^= byte << 8;
    for (let i = 0; i < 8; i++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc % SLOTS;
}

/**
 * One channel per shard: `base` on one server; on a Cluster, `base{n}` for each current master,
 * with the smallest `n` whose slot that master serves. A replica promoted in a failover serves the
 * same slots, so the channel of a shard survives its failover unchanged.
 */
export function channelPerShard(client: RedisClient, base: string): string[] {
  if (!(client instanceof Cluster)) return [base];
  const slots = (client as unknown as { slots: (string[] | undefined)[] }).slots;
  const masters = new Set<string>();
  for (const nodes of slots) if (nodes?.[0]) masters.add(nodes[0]);
  const channels: string[] = [];
  for (let n = 0; masters.size > 0 && n < 10_000; n++) {
    const master = slots[keySlot(String(n))]?.[0];
    if (master !== undefined && masters.delete(master)) channels.push(`${base}{${n}}`);
  }
  return channels;
}
