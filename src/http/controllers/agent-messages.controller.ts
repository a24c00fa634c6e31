import type { Request as ExRequest } from 'express';
import { Body, Controller, OperationId, Path, Post, Request, Response, Route, Security, SuccessResponse, Tags } from '@tsoa/runtime';
import { ADMIN_CLIENT_ID } from '../../protocol';
import { LogUnavailableError } from '../../relay/message-log';
import { DeliveryBudgetError } from '../../relay/delivery-budget';
import { QuotaExceededError } from '../../store/bot-quota';
import { ControlConflictError } from '../../relay/handoff/conversation-control';
import {
  contentFieldError,
  ConversationHeldError,
  ForbiddenError,
  InsufficientStorageError,
  PayloadTooLargeError,
  RateLimitedError,
  ServiceUnavailableError,
  ValidationError,
} from '../errors';
import { assertActsFor, principalOf } from '../principal';
import type { HttpServices } from '../http-services';
import type { AgentId, AgentMessageDto, PublishedMessageDto } from '../models/agent.dto';
import type { SingleModel } from '../models/envelope.dto';
import type { ProblemDto } from '../models/problem.dto';
import { single } from '../services/pagination';

/** Messages a backend sends to a bot's clients, as if the bot replied. */
@Route('agents')
@Tags('AgentMessages')
@Security('api-key', ['messages:publish'])
export class AgentMessagesController extends Controller {
  constructor(private readonly services: HttpServices) {
    super();
  }

  /**
   * Delivers `text` (and `data`) to every socket of the clientId `to`, or with `*` to every client
   * of the bot, on every replica, exactly like an agent runtime's `reply`. The key publishes only
   * to the bots in its `agentIds` (else 403 `AGENT_NOT_ALLOWED`), and to `to: "admin"` only when
   * created with `adminRecipient` (else 403 `RECIPIENT_NOT_ALLOWED`). It spends the bot's delivery
   * budget on this replica like a `reply` (over it: 429 `RATE_LIMITED` with Retry-After).
   * @summary Publish a message as the agent
   */
  @Post('{agentId}/messages')
  @OperationId('publishAgentMessage')
  @SuccessResponse(202, 'Accepted')
  @Response<ProblemDto>(
    400,
    'Invalid agentId or body, data nested too deeply, or a bad part (docs/parts.md)',
    undefined,
    'application/problem+json',
  )
  @Response<ProblemDto>(401, 'Missing or unknown API key', undefined, 'application/problem+json')
  @Response<ProblemDto>(
    429,
    "Too many failed authentications from this address, or the bot's deliveries on this replica are over AGENT_DELIVERY_RATE_PER_S (nothing was sent); see Retry-After",
    undefined,
    'application/problem+json',
  )
  @Response<ProblemDto>(
    403,
    'The API key lacks the messages:publish scope, is not bound to this bot, or may not publish to admin',
    undefined,
    'application/problem+json',
  )
  @Response<ProblemDto>(
    413,
    'Body larger than REST_BODY_LIMIT_BYTES, or text, data and parts above MAX_MESSAGE_BYTES',
    undefined,
    'application/problem+json',
  )
  @Response<ProblemDto>(
    409,
    'An operator holds the conversation (CONVERSATION_HELD, docs/handoff.md); nothing was sent',
    undefined,
    'application/problem+json',
  )
  @Response<ProblemDto>(415, 'Body is not JSON', undefined, 'application/problem+json')
  @Response<ProblemDto>(503, 'The conversation log is unreachable; nothing was sent', undefined, 'application/problem+json')
  @Response<ProblemDto>(507, "The bot's storage quota is full (QUOTA_EXCEEDED); nothing was sent", undefined, 'application/problem+json')
  public async publishAgentMessage(
    @Path() agentId: AgentId,
    @Body() body: AgentMessageDto,
    @Request() req: ExRequest,
  ): Promise<SingleModel<PublishedMessageDto>> {
    const principal = principalOf(req);
    assertActsFor(principal, agentId, 'publish as');
    if (principal.scheme === 'api-key') {
      if (body.to === ADMIN_CLIENT_ID && principal.apiKey.adminRecipient !== true) {
        throw new ForbiddenError('RECIPIENT_NOT_ALLOWED', 'This API key may not publish to "admin".');
      }
    }
    const relay = this.services.relay;
    const checked = relay.checkContent(body, 'agent');
    if (!('content' in checked)) {
      if (checked.error.code === 'PAYLOAD_TOO_LARGE') throw new PayloadTooLargeError('text, data and parts exceed MAX_MESSAGE_BYTES.');
      throw new ValidationError([contentFieldError(checked.error.message)]);
    }
    try {
      const { id, ts } = await relay.publish(agentId, { to: body.to, replyTo: body.replyTo, ...checked.content });
      return single({ id, ts: new Date(ts) });
    } catch (err) {
      if (err instanceof ControlConflictError)
        throw new ConversationHeldError(err.current.operator && { name: err.current.operator.name }, `${err.message} Nothing was sent.`);
      if (err instanceof LogUnavailableError) throw new ServiceUnavailableError('The message could not be logged; nothing was sent.');
      if (err instanceof QuotaExceededError) throw new InsufficientStorageError(`${err.message}; nothing was sent.`);
      if (err instanceof DeliveryBudgetError) {
        throw new RateLimitedError(Math.ceil(err.retryAfterMs / 1000), `${err.message}; nothing was sent.`);
      }
      throw err;
    }
  }
}
