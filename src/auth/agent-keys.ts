import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * Checks agent API keys in constant time. Keys are compared as SHA-256 digests so the comparison
 * takes the same time whatever the length of the presented key, and every configured key is
 * checked even after a match so timing does not reveal which one matched.
 */
export class AgentKeyMatcher {
  private readonly digests: Buffer[];

  constructor(keys: readonly string[]) {
    this.digests = keys.map(sha256);
  }

  matches(presented: unknown): boolean {
    return this.match(presented) !== null;
  }

  /**
   * The matched key's identity for failure limits (`key:` and the first 16 hex digits of its
   * SHA-256, which names the key in logs without revealing it), or null.
   */
  match(presented: unknown): string | null {
    if (typeof presented !== 'string' || presented.length === 0) return null;
    const digest = sha256(presented);
    let match = false;
    for (const known of this.digests) {
      if (timingSafeEqual(digest, known)) match = true;
    }
    return match ? `key:${digest.toString('hex').slice(0, 16)}` : null;
  }
}

export function sha256(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}
