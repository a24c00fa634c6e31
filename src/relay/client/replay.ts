import type { Logger } from '../../logging/logger';
import type { LoggedMessage } from '../../store/conversation-log';
import type { Conversations } from '../conversations';
import type { ClientSocketData, RelayContext } from '../relay.context';

/** What a reconnecting client gets before `session`: all it missed, or nothing. */
export interface Replay {
  recovered: boolean;
  messages: LoggedMessage[];
}

const NOTHING: Replay = { recovered: false, messages: [] };

/**
 * Reads what the client missed after `lastMessageId` (docs/protocol.md, "Recovery"). Called after the socket joined its
 * rooms: it first waits until those subscriptions are in effect, so every message appended after
 * the read is also broadcast to the socket (and held until the replay is sent). An id that is not
 * a 1–64 character string, unknown, or too far back, or a log that cannot be read, replays nothing.
 */
export async function replayMissed(
  ctx: RelayContext,
  conversations: Conversations,
  data: ClientSocketData,
  lastMessageId: unknown,
  logger: Logger,
): Promise<Replay> {
  if (typeof lastMessageId !== 'string' || lastMessageId.length === 0 || lastMessageId.length > 64) {
    ctx.metrics.replays.inc({ recovered: 'false' });
    return NOTHING;
  }
  try {
    await ctx.subscriptionsSettled();
    const result = await conversations.recover(data.agentId, data.clientId, lastMessageId);
    return result.ok ? { recovered: true, messages: result.messages } : NOTHING;
  } catch (err) {
    ctx.metrics.replays.inc({ recovered: 'false' });
    logger.warn({ err }, 'conversation log unavailable; nothing replayed (recovered: false)');
    return NOTHING;
  }
}
