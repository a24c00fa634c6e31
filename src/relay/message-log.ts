import type { HubConfig } from '../config/config';
import type { HubMetrics, Tally } from '../metrics/metrics';
import type { ConversationLog, HistoryPage, LoggedMessage, Publication, Recovery } from '../store/conversation-log';
import { QuotaExceededError } from '../store/bot-quota';
import { ConversationHeldError } from '../store/control-store';
import type { ControlState } from '../protocol';

/** Thrown when a message could not be written to the log: the sender must get SERVER_UNAVAILABLE. */
export class LogUnavailableError extends Error {
  constructor(cause: unknown) {
    super('the conversation log could not be written', { cause });
    this.name = 'LogUnavailableError';
  }
}

/**
 * The relay's write-ahead view of the store's conversation log (`store.log`, docs/protocol.md,
 * "Conversations and delivery guarantees"): records before delivery, recovers, reads pages, counts,
 * and turns into no-ops when HISTORY_ENABLED is false (nothing recorded, nothing recovered, empty
 * history).
 */
export class MessageLog {
  readonly enabled: boolean;
  private readonly appended: Record<LoggedMessage['author'], Tally>;

  constructor(
    private readonly log: ConversationLog,
    private readonly config: HubConfig,
    private readonly metrics: HubMetrics,
  ) {
    this.enabled = config.HISTORY_ENABLED;
    this.appended = {
      user: metrics.logAppends.bind({ author: 'user', result: 'ok' }),
      agent: metrics.logAppends.bind({ author: 'agent', result: 'ok' }),
      operator: metrics.logAppends.bind({ author: 'operator', result: 'ok' }),
      system: metrics.logAppends.bind({ author: 'system', result: 'ok' }),
    };
  }

  /**
   * Records `message` in the conversation of `clientId` (or the bot's broadcasts for null) before
   * it is delivered; rejects with {@link LogUnavailableError} when it may not have been, and with
   * QuotaExceededError (store/bot-quota.ts) when the bot's quota refused it (nothing logged). `fresh`:
   * its id was stamped for this record and cannot be logged yet (not a retry). Given a
   * `publication` for a fresh message, the log publishes it once the append succeeded, where it
   * can: resolves true when it did (the caller then delivers to this replica's sockets only),
   * false when the caller must still send it.
   */
  async record(
    agentId: string,
    clientId: string | null,
    message: LoggedMessage,
    fresh: boolean,
    publication: Publication | null = null,
  ): Promise<boolean> {
    if (!this.enabled) return false;
    const { log } = this;
    try {
      let published = false;
      if (fresh && publication !== null && log.appendThenPublish) {
        await log.appendThenPublish(agentId, clientId, message, publication);
        published = true;
      } else await log.append(agentId, clientId, message, fresh);
      this.counted(message.author);
      return published;
    } catch (err) {
      this.failed(message.author);
      if (err instanceof QuotaExceededError) throw err;
      throw new LogUnavailableError(err);
    }
  }

  /**
   * Records a bot's fresh reply to one conversation as {@link record} does, unless an operator holds
   * it: the log reads who answers in the same step, and rejects with ConversationHeldError
   * (store/control-store.ts) when an operator does, nothing logged or published. Resolves with
   * whether the log published it and the conversation's control state. The log must be enabled.
   */
  async recordReply(
    agentId: string,
    clientId: string,
    message: LoggedMessage,
    publication: Publication | null,
  ): Promise<{ published: boolean; control: ControlState }> {
    try {
      const done = await this.log.appendReply(agentId, clientId, message, publication);
      this.counted(message.author);
      return done;
    } catch (err) {
      if (err instanceof ConversationHeldError) throw err;
      this.failed(message.author);
      if (err instanceof QuotaExceededError) throw err;
      throw new LogUnavailableError(err);
    }
  }

  /** Counts a message logged by another store call (the client message intake). */
  counted(author: LoggedMessage['author']): void {
    this.appended[author].add();
  }

  /** Counts a message that could not be logged by another store call. */
  failed(author: LoggedMessage['author']): void {
    this.metrics.logAppends.inc({ author, result: 'error' });
  }

  /** What a client that last saw `afterId` missed, all or nothing (RECOVERY_MAX_MESSAGES). */
  async recover(agentId: string, clientId: string, afterId: string): Promise<Recovery> {
    if (!this.enabled) return { ok: false, reason: 'unknown' };
    const result = await this.log.readAfter(agentId, clientId, afterId, this.config.RECOVERY_MAX_MESSAGES);
    this.metrics.replays.inc({ recovered: String(result.ok) });
    if (result.ok) this.metrics.replayedMessages.inc(result.messages.length);
    return result;
  }

  /** A page of history, oldest first. */
  async page(
    agentId: string,
    clientId: string,
    before: string | undefined,
    limit: number,
    source: 'socket' | 'rest',
  ): Promise<HistoryPage> {
    this.metrics.historyReads.inc({ source });
    if (!this.enabled) return { messages: [], hasMore: false };
    return this.log.readBefore(agentId, clientId, before, limit);
  }

  deleteConversation(agentId: string, clientId: string): Promise<boolean> {
    return this.log.deleteConversation(agentId, clientId);
  }

  deleteUser(clientId: string): Promise<number> {
    return this.log.deleteUser(clientId);
  }
}
