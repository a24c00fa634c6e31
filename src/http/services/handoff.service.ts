import type { ClientIdentity } from '../../auth/identity';
import { operatesFor } from '../../auth/identity';
import type { ControlState } from '../../protocol';
import type { RelayService } from '../../relay/relay.service';
import { ControlConflictError } from '../../relay/handoff/conversation-control';
import type { ControlRecord, OperatorRef } from '../../store/control-store';
import { ConflictError, contentFieldError, ConversationHeldError, ForbiddenError, PayloadTooLargeError, ValidationError } from '../errors';
import type { PaginationModel } from '../models/envelope.dto';
import type { ConversationControlDto, ConversationSummaryDto, OperatorMessageDto, OperatorMessageSentDto } from '../models/handoff.dto';
import { paginated, type PageRequest } from './pagination';
import { unavailableAs503 } from './conversations.service';

/** Order of the list: waiting first, then held, then the bot's live conversations. */
const RANK: Record<ControlState, number> = { waiting: 0, human: 1, bot: 2 };

/**
 * The operator console's REST side (docs/handoff.md): the list of a bot's conversations, take
 * over, write, hand back. Every operation first checks that the token's holder operates the bot.
 */
export class HandoffService {
  constructor(private readonly relay: RelayService) {}

  /** The operator of an identity for `agentId`; 403 AGENT_NOT_ALLOWED otherwise, before anything is read. */
  operatorFor(identity: ClientIdentity, agentId: string): OperatorRef {
    if (!operatesFor(identity, agentId)) throw new ForbiddenError('AGENT_NOT_ALLOWED', `This token may not operate the bot "${agentId}".`);
    return { sub: identity.sub, name: identity.operator!.name };
  }

  async list(agentId: string, control: ControlState | undefined, request: PageRequest): Promise<PaginationModel<ConversationSummaryDto>> {
    const [handedOff, online] = await unavailableAs503(() =>
      Promise.all([this.relay.control.listHandedOffOf(agentId), this.relay.control.onlineClients(agentId)]),
    );
    const records = new Map(handedOff.map((r) => [r.clientId, r]));
    for (const clientId of online) {
      if (!records.has(clientId)) records.set(clientId, { agentId, clientId, state: 'bot', version: 0, since: null });
    }
    const all = [...records.values()]
      .filter((r) => control === undefined || r.state === control)
      .sort(
        (a, b) => RANK[a.state] - RANK[b.state] || (a.since ?? '').localeCompare(b.since ?? '') || a.clientId.localeCompare(b.clientId),
      );
    const slice = all.slice(request.offset, request.offset + request.limit);
    const items = await unavailableAs503(() =>
      Promise.all(
        slice.map(async (record): Promise<ConversationSummaryDto> => {
          const page = await this.relay.messageLog.page(agentId, record.clientId, undefined, 1, 'rest');
          const last = page.messages.at(-1);
          return {
            ...controlDto(record),
            online: online.has(record.clientId),
            ...(last ? { lastMessage: { author: last.author, text: last.text, ts: new Date(last.ts) } } : {}),
          };
        }),
      ),
    );
    return paginated(items, all.length, request);
  }

  async takeOver(identity: ClientIdentity, agentId: string, clientId: string): Promise<ConversationControlDto> {
    const operator = this.operatorFor(identity, agentId);
    return controlDto(await conflictsAs409(() => this.relay.control.takeOver(agentId, clientId, operator, identity.isAdmin)));
  }

  async release(identity: ClientIdentity, agentId: string, clientId: string): Promise<ConversationControlDto> {
    const operator = this.operatorFor(identity, agentId);
    return controlDto(await conflictsAs409(() => this.relay.control.release(agentId, clientId, operator, identity.isAdmin)));
  }

  async send(identity: ClientIdentity, agentId: string, clientId: string, body: OperatorMessageDto): Promise<OperatorMessageSentDto> {
    const operator = this.operatorFor(identity, agentId);
    // An operator's parts are checked as a bot's (docs/handoff.md): a refused body changes nothing.
    const checked = this.relay.checkContent(body, 'agent');
    if (!('content' in checked)) {
      if (checked.error.code === 'PAYLOAD_TOO_LARGE') throw new PayloadTooLargeError('text, data and parts exceed MAX_MESSAGE_BYTES.');
      throw new ValidationError([contentFieldError(checked.error.message)]);
    }
    const { content } = checked;
    if (content.text === '' && content.parts === undefined)
      throw new ValidationError([{ path: 'body.text', message: 'must not be empty' }]);
    const message = await conflictsAs409(() => this.relay.control.operatorMessage(agentId, clientId, operator, content));
    return { id: message.id, ts: new Date(message.ts), operator: { name: operator.name } };
  }
}

/** A refused change as its 409: CONVERSATION_HELD names the holder. */
async function conflictsAs409<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (!(err instanceof ControlConflictError)) throw err;
    if (err.code === 'CONVERSATION_NOT_HELD') throw new ConflictError('CONVERSATION_NOT_HELD', err.message);
    throw new ConversationHeldError(err.current.operator && { name: err.current.operator.name }, err.message);
  }
}

function controlDto(record: ControlRecord): ConversationControlDto {
  return {
    agentId: record.agentId,
    clientId: record.clientId,
    control: record.state,
    ...(record.since === null ? {} : { since: new Date(record.since) }),
    ...(record.reason === undefined ? {} : { reason: record.reason }),
    ...(record.summary === undefined ? {} : { summary: record.summary }),
    ...(record.operator ? { operator: { name: record.operator.name } } : {}),
  };
}
