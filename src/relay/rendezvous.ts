/**
 * Rendezvous (highest random weight) hashing: every key picks the candidate with the highest
 * score of hash(key, candidate). A key stays on its candidate while that candidate exists, and
 * only the keys of a leaving candidate move.
 */
export function pickByRendezvous<T>(key: string, candidates: readonly T[], idOf: (c: T) => string): T | undefined {
  let best: T | undefined;
  let bestScore = -1;
  for (const candidate of candidates) {
    const score = fnv1a32(`${key}\u0000${idOf(candidate)}`);
    if (score > bestScore) {
      best = candidate;
      bestScore = score;
    }
  }
  return best;
}

/** 32-bit FNV-1a with a murmur3 finalizer so similar inputs spread over the whole range. */
export function fnv1a32(input: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < input.length; i++) {
    h ^= input.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}
