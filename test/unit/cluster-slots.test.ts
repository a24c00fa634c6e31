import { keySlot } from '../../src/cluster/cluster-slots';

describe('keySlot', () => {
  it('matches CLUSTER KEYSLOT', () => {
    // Values from the Redis Cluster specification and `CLUSTER KEYSLOT` on Redis 7.
    expect(keySlot('123456789')).toBe(0x31c3);
    expect(keySlot('foo')).toBe(12182);
    expect(keySlot('')).toBe(0);
  });
});
