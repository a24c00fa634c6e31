import type { Logger } from '../../logging/logger';
import type { LoggedMessage } from '../../store/conversation-log';
import type { MessageLog } from '../message-log';
import type { ConversationControl } from '../handoff/conversation-control';
import type { ClientSocketData, RelayContext } from '../relay.context';
import type { UserBudgets } from '../user-budgets';

/**
 * What a reconnecting client gets before `session`: all it missed, the newest of it cut to a number
 * of bytes (`hasMore`: the older ones are for `history`), or nothing.
 */
export interface Replay {
  recovered: boolean;
  messages: LoggedMessage[];
  hasMore: boolean;
}

const NOTHING: Replay = { recovered: false, messages: [], hasMore: false };

/**
 * Reads what the client missed after `lastMessageId` (docs/protocol.md, "Recovery"). Called after the socket joined its
 * rooms: it first waits until those subscriptions are in effect, so every message appended after
 * the read is also broadcast to the socket (and held until the replay is sent). An id that is not
 * a 1–64 character string, unknown, or too far back, or a log that cannot be read, replays nothing.
 * What is replayed is at most REPLAY_MAX_BYTES and what the user's read budget holds (spent here):
 * the newest missed messages that fit, so a client paging `history` back from the oldest of them
 * gets the rest. With the budget spent the log is not read at all. The bot's broadcasts skipped
 * while a person holds the conversation are left out (docs/handoff.md).
 */
export async function replayMissed(
  ctx: RelayContext,
  messageLog: MessageLog,
  budgets: UserBudgets,
  control: Pick<ConversationControl, 'withoutHeldBroadcasts'>,
  data: ClientSocketData,
  lastMessageId: unknown,
  logger: Logger,
): Promise<Replay> {
  if (typeof lastMessageId !== 'string' || lastMessageId.length === 0 || lastMessageId.length > 64) {
    ctx.metrics.replays.inc({ recovered: 'false' });
    return NOTHING;
  }
  if (budgets.readable(data.sub) <= 0) {
    ctx.metrics.replays.inc({ recovered: 'false' });
    return NOTHING;
  }
  try {
    await ctx.subscriptionsSettled();
    const result = await messageLog.recover(data.agentId, data.clientId, lastMessageId);
    if (!result.ok) return NOTHING;
    const limit = Math.min(ctx.config.REPLAY_MAX_BYTES, budgets.readable(data.sub));
    const missed = await control.withoutHeldBroadcasts(data.agentId, data.clientId, result.messages);
    const { messages, bytes } = newestWithin(missed, limit);
    budgets.read(data.sub, bytes);
    return { recovered: true, messages, hasMore: messages.length < missed.length };
  } catch (err) {
    ctx.metrics.replays.inc({ recovered: 'false' });
    logger.warn({ err }, 'conversation log unavailable; nothing replayed (recovered: false)');
    return NOTHING;
  }
}

/** The newest of `messages` (oldest first) whose JSON fits in `limit` bytes together, and their bytes. */
function newestWithin(messages: LoggedMessage[], limit: number): { messages: LoggedMessage[]; bytes: number } {
  let bytes = 0;
  let first = messages.length;
  while (first > 0) {
    const size = Buffer.byteLength(JSON.stringify(messages[first - 1])) + 1;
    if (bytes + size > limit) break;
    bytes += size;
    first--;
  }
  return { messages: first === 0 ? messages : messages.slice(first), bytes };
}
