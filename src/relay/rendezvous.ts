/**
 * Rendezvous (highest random weight) hashing: every key picks the candidate with the highest
 * score of hash(key, candidate). A key stays on its candidate while that candidate exists, and
 * only the keys of a leaving candidate move.
 */
export function pickByRendezvous<T>(key: string, candidates: readonly T[], idOf: (c: T) => string): T | undefined {
  return pickByRendezvousSeed(rendezvousSeed(key), candidates, idOf);
}

/** {@link pickByRendezvous} for the key whose {@link rendezvousSeed} is `seed`. */
export function pickByRendezvousSeed<T>(seed: number, candidates: readonly T[], idOf: (c: T) => string): T | undefined {
  let best: T | undefined;
  let bestScore = -1;
  for (const candidate of candidates) {
    const score = rendezvousScore(seed, idOf(candidate));
    if (score > bestScore) {
      best = candidate;
      bestScore = score;
    }
  }
  return best;
}

/**
 * What every candidate's score for `key` starts from: the FNV-1a state (unsigned) after the key and
 * a separator. A Redis script given it scores candidates the same way (the store's intake).
 */
export function rendezvousSeed(key: string): number {
  return fnvUpdate(FNV_OFFSET, `${key}\u0000`) >>> 0;
}

/**
 * The score of candidate `id` for the key `seed` came from: 32-bit FNV-1a with a murmur3 finalizer,
 * so similar inputs spread over the whole range.
 */
function rendezvousScore(seed: number, id: string): number {
  return mix(fnvUpdate(seed, id));
}

const FNV_OFFSET = 0x811c9dc5;

/** FNV-1a over the UTF-16 code units of `input`, from state `h`. */
function fnvUpdate(h: number, input: string): number {
  for (let i = 0; i < input.length; i++) {
    h ^= input.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h;
}

/** The murmur3 finalizer, unsigned. */
function mix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}
