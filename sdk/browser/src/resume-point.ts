import { RelayChatError } from './codes';
import { badOption } from './checks';

/** The part of the Web Storage API the SDK uses (`sessionStorage`, `localStorage` or your own). */
export interface StorageLike {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
}

/** Where `persist` keeps the last id: `true` = `sessionStorage` when the page has one. */
export type PersistOption = boolean | StorageLike;

/** Prefix of the storage keys, so a page can find (and clear) what the SDK wrote. */
export const STORAGE_PREFIX = 'relay-hub:lastMessageId:';

/**
 * The id of the last message this chat saw: the `lastMessageId` of its next handshake (docs/protocol.md, recovery).
 *
 * It belongs to one conversation, `(hub, agentId, sub)`. The `sub` is read from the token of each
 * connect attempt, before the handshake, so a getter that hands out another user's token never
 * resumes with the previous user's id, and the storage key (a JSON array of the four parts, which no
 * two conversations share) keeps users and bots of one page apart. A storage that throws (quota,
 * disabled, blocked by privacy settings) is reported once as `STORAGE_FAILED` and the id lives on in
 * memory: persistence is a convenience, never a reason for the chat to fail.
 */
export class ResumePoint {
  private key: string | undefined;
  private id: string | undefined;
  private reported = false;

  constructor(
    /** Hub endpoint and bot, the fixed part of the conversation. */
    private readonly scope: readonly string[],
    /** `true` until the first use looks `sessionStorage` up; then the storage, or false. */
    private persist: PersistOption,
    private readonly report: (error: RelayChatError) => void,
  ) {
    if (typeof persist === 'object' && typeof persist?.setItem !== 'function') {
      throw badOption('persist', 'a boolean or a Storage');
    }
  }

  /** The id to send with a connect attempt made with `token`, or undefined to start fresh. */
  forToken(token: string): string | undefined {
    const sub = subOf(token);
    const key = sub === undefined ? undefined : STORAGE_PREFIX + JSON.stringify([...this.scope, sub]);
    // A token without a readable sub: keep the id in memory (the hub still checks it against the
    // token's own conversation), but never store it under a key that could belong to anyone.
    if (key === undefined) {
      if (this.key !== undefined) this.id = undefined;
    } else if (key !== this.key) {
      this.id = this.read(key);
    }
    this.key = key;
    return this.id;
  }

  /** Records the id of a message the app has been given (delivered, replayed, or its own send). */
  set(id: string): void {
    this.id = id;
    const storage = this.key === undefined ? undefined : this.storage();
    if (!storage) return;
    try {
      storage.setItem(this.key!, id);
    } catch (err) {
      this.fail(err);
    }
  }

  private read(key: string): string | undefined {
    const storage = this.storage();
    if (!storage) return undefined;
    try {
      const value = storage.getItem(key);
      // Anything else was not written by this SDK; the hub would only answer it with a gap.
      return typeof value === 'string' && value.length > 0 && value.length <= 64 ? value : undefined;
    } catch (err) {
      this.fail(err);
      return undefined;
    }
  }

  private storage(): StorageLike | undefined {
    if (this.persist === true) {
      this.persist = false;
      try {
        // Reading the property itself throws a SecurityError where the browser blocks storage.
        this.persist = (globalThis as { sessionStorage?: StorageLike }).sessionStorage ?? false;
      } catch (err) {
        this.fail(err);
      }
    }
    return this.persist || undefined;
  }

  private fail(err: unknown): void {
    if (this.reported) return;
    this.reported = true;
    this.report(new RelayChatError('STORAGE_FAILED', `storage failed (resume point kept in memory): ${String(err)}`));
  }
}

/** The `sub` claim of a JWT, read without verifying (the hub verifies); undefined when unreadable. */
export function subOf(token: string): string | undefined {
  try {
    // atob decodes unpadded base64 (forgiving-base64); base64url needs only its two letters mapped.
    const claims = JSON.parse(atob(token.split('.')[1].replace(/-/g, '+').replace(/_/g, '/'))) as { sub?: unknown };
    return typeof claims?.sub === 'string' && claims.sub !== '' ? claims.sub : undefined;
  } catch {
    return undefined;
  }
}
