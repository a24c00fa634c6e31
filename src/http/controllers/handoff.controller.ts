import type { Request as ExRequest } from 'express';
import {
  Body,
  Controller,
  Get,
  OperationId,
  Path,
  Post,
  Query,
  Request,
  Response,
  Route,
  Security,
  SuccessResponse,
  Tags,
} from '@tsoa/runtime';
import type { HttpServices } from '../http-services';
import type { AgentId } from '../models/agent.dto';
import type { PaginationModel, SingleModel } from '../models/envelope.dto';
import type {
  ControlStateDto,
  ConversationControlDto,
  ConversationSummaryDto,
  OperatorMessageDto,
  OperatorMessageSentDto,
} from '../models/handoff.dto';
import type { ProblemDto } from '../models/problem.dto';
import { identityOf } from '../principal';
import { pageRequest, single } from '../services/pagination';

/**
 * The operator console's REST side (docs/handoff.md): operator tokens (role OPERATOR, signed with
 * ADMIN_JWT_SECRET) for the bots of their `agentIds`, admin tokens for every bot.
 */
@Route('agents')
@Tags('Handoff')
@Security('defaultBearerAuth', ['OPERATOR'])
@Response<ProblemDto>(401, 'Missing or invalid token', undefined, 'application/problem+json')
@Response<ProblemDto>(
  403,
  'Not an operator or admin token (ROLE_REQUIRED), or not for this bot (AGENT_NOT_ALLOWED)',
  undefined,
  'application/problem+json',
)
@Response<ProblemDto>(429, 'Too many failed authentications from this address; see Retry-After', undefined, 'application/problem+json')
export class HandoffController extends Controller {
  constructor(private readonly services: HttpServices) {
    super();
  }

  /**
   * The bot's conversations an operator should see: those `waiting` for a person first (oldest
   * first, with the bot's reason and summary), then those held by an operator, then those whose
   * user is online, each with its newest message.
   * @summary List a bot's conversations for operators
   * @param control Only conversations in this state.
   * @param page 1-based page number, at most 10000000.
   * @param perPage Page size, 1–100.
   * @isInt page
   * @minimum page 1
   * @maximum page 10000000
   * @isInt perPage
   * @minimum perPage 1
   * @maximum perPage 100
   */
  @Get('{agentId}/conversations')
  @OperationId('getConversations')
  @Response<ProblemDto>(400, 'Invalid agentId, control or paging', undefined, 'application/problem+json')
  @Response<ProblemDto>(503, 'Shared state is unreachable', undefined, 'application/problem+json')
  public async getConversations(
    @Path() agentId: AgentId,
    @Request() req: ExRequest,
    @Query() control?: ControlStateDto,
    @Query() page?: number,
    @Query() perPage?: number,
  ): Promise<PaginationModel<ConversationSummaryDto>> {
    this.services.handoff.operatorFor(identityOf(req), agentId);
    return this.services.handoff.list(agentId, control, pageRequest(page, perPage));
  }

  /**
   * Takes the conversation over: from now on the bot's replies and streams to this user are
   * refused (`CONVERSATION_HELD`), the user's messages reach the bot marked `observed`, and the
   * user's tabs see the operator join. Of two operators at once, one wins; the other gets 409
   * `CONVERSATION_HELD` with `holder`. Taking over one's own conversation again is a no-op.
   * @summary Take a conversation over
   * @param clientId The user's clientId (their JWT `sub`).
   */
  @Post('{agentId}/conversations/{clientId}/takeover')
  @OperationId('takeOverConversation')
  @Response<ProblemDto>(400, 'Invalid agentId', undefined, 'application/problem+json')
  @Response<ProblemDto>(
    409,
    'Another operator holds the conversation (CONVERSATION_HELD, `holder` names them)',
    undefined,
    'application/problem+json',
  )
  public async takeOverConversation(
    @Path() agentId: AgentId,
    @Path() clientId: string,
    @Request() req: ExRequest,
  ): Promise<SingleModel<ConversationControlDto>> {
    return single(await this.services.handoff.takeOver(identityOf(req), agentId, clientId));
  }

  /**
   * Sends a message to the user as the operator holding the conversation: logged as
   * `author: "operator"` with the operator's name and delivered to every tab of the user. Restarts
   * the idle count (HANDOFF_IDLE_TIMEOUT_S).
   * @summary Write to the user as the operator
   * @param clientId The user's clientId (their JWT `sub`).
   */
  @Post('{agentId}/conversations/{clientId}/operator-messages')
  @OperationId('createOperatorMessage')
  @SuccessResponse(201, 'Sent')
  @Response<ProblemDto>(
    400,
    'Invalid agentId or body, empty text without parts, or a bad part (docs/parts.md); nothing was sent',
    undefined,
    'application/problem+json',
  )
  @Response<ProblemDto>(
    409,
    'Another operator holds the conversation (CONVERSATION_HELD), or nobody does (CONVERSATION_NOT_HELD): take it over first; nothing was sent',
    undefined,
    'application/problem+json',
  )
  @Response<ProblemDto>(413, 'text, data and parts above MAX_MESSAGE_BYTES', undefined, 'application/problem+json')
  @Response<ProblemDto>(415, 'Body is not JSON', undefined, 'application/problem+json')
  public async createOperatorMessage(
    @Path() agentId: AgentId,
    @Path() clientId: string,
    @Body() body: OperatorMessageDto,
    @Request() req: ExRequest,
  ): Promise<SingleModel<OperatorMessageSentDto>> {
    this.setStatus(201);
    return single(await this.services.handoff.send(identityOf(req), agentId, clientId, body));
  }

  /**
   * Hands the conversation back to the bot; the user's tabs are told they are back with the
   * assistant. The holder or an admin may, and any operator of the bot while it is `waiting`.
   * A conversation the bot answers already stays as it is.
   * @summary Hand a conversation back to the bot
   * @param clientId The user's clientId (their JWT `sub`).
   */
  @Post('{agentId}/conversations/{clientId}/release')
  @OperationId('releaseConversation')
  @Response<ProblemDto>(400, 'Invalid agentId', undefined, 'application/problem+json')
  @Response<ProblemDto>(409, 'Another operator holds the conversation (CONVERSATION_HELD)', undefined, 'application/problem+json')
  public async releaseConversation(
    @Path() agentId: AgentId,
    @Path() clientId: string,
    @Request() req: ExRequest,
  ): Promise<SingleModel<ConversationControlDto>> {
    return single(await this.services.handoff.release(identityOf(req), agentId, clientId));
  }
}
