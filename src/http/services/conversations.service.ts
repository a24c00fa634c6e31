import type { RelayService } from '../../relay/relay.service';
import { ServiceUnavailableError } from '../errors';
import type { ConversationMessageDto } from '../models/conversation.dto';
import type { PaginationModel } from '../models/envelope.dto';
import { paginated, type PageRequest } from './pagination';

/**
 * Conversation logs over REST. A conversation holds at most HISTORY_MAX_MESSAGES of its own plus as
 * many broadcasts, so a page is cut from the whole log read at once.
 */
export class ConversationsService {
  constructor(
    private readonly relay: RelayService,
    private readonly maxMessages: number,
  ) {}

  private get messageLog() {
    return this.relay.messageLog;
  }

  async page(agentId: string, clientId: string, request: PageRequest): Promise<PaginationModel<ConversationMessageDto>> {
    const { messages } = await unavailableAs503(() => this.messageLog.page(agentId, clientId, undefined, 2 * this.maxMessages, 'rest'));
    const end = Math.max(0, messages.length - request.offset);
    const slice = messages.slice(Math.max(0, end - request.limit), end);
    return paginated(
      slice.map(({ feedback, ...m }): ConversationMessageDto => ({
        ...m,
        ts: new Date(m.ts),
        ...(feedback ? { feedback: { ...feedback, ts: new Date(feedback.ts) } } : {}),
      })),
      messages.length,
      request,
    );
  }

  async delete(agentId: string, clientId: string): Promise<void> {
    await unavailableAs503(() => this.messageLog.deleteConversation(agentId, clientId));
  }

  /** Erases every conversation of `sub` with every bot (deleteUser). */
  async deleteUser(sub: string): Promise<void> {
    await unavailableAs503(() => this.messageLog.deleteUser(sub));
  }
}

export async function unavailableAs503<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch {
    throw new ServiceUnavailableError('The conversation log is unreachable; retry later.');
  }
}
