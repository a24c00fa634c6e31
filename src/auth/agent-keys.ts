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
    if (typeof presented !== 'string' || presented.length === 0) return false;
    const digest = sha256(presented);
    let match = false;
    for (const known of this.digests) {
      if (timingSafeEqual(digest, known)) match = true;
    }
    return match;
  }
}

export function sha256(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}
