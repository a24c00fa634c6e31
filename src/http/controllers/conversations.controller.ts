import type { Request as ExRequest } from 'express';
import {
  Controller,
  Delete,
  Get,
  OperationId,
  Path,
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
import type { ConversationMessageDto } from '../models/conversation.dto';
import type { PaginationModel } from '../models/envelope.dto';
import type { ProblemDto } from '../models/problem.dto';
import { assertActsFor, principalOf } from '../principal';
import { pageRequest } from '../services/pagination';

/**
 * Conversation logs (docs/rest.md, "Conversations"): what a bot and one clientId said to each other, including the bot's
 * broadcasts. ADMIN bearer tokens (every bot), or API keys with `history:read` / `history:write`
 * for the bots in their `agentIds` only.
 */
@Route('agents')
@Tags('Conversations')
export class ConversationsController extends Controller {
  constructor(private readonly services: HttpServices) {
    super();
  }

  /**
   * The conversation of `clientId` with the bot, newest page first: page 1 holds the newest
   * `perPage` messages, each page oldest first. Empty (not 404) for a conversation never held or
   * expired. An API key reads only the bots in its `agentIds` (else 403 `AGENT_NOT_ALLOWED`).
   * @summary List a conversation's messages
   * @param clientId The user's clientId (their JWT `sub`, or `admin`).
   * @param page 1-based page number, at most 10000000; 1 is the newest.
   * @param perPage Page size, 1–100.
   * @isInt page
   * @minimum page 1
   * @maximum page 10000000
   * @isInt perPage
   * @minimum perPage 1
   * @maximum perPage 100
   */
  @Get('{agentId}/conversations/{clientId}/messages')
  @OperationId('getConversationMessages')
  @Security('defaultBearerAuth', ['ADMIN'])
  @Security('api-key', ['history:read'])
  @Response<ProblemDto>(400, 'Invalid agentId or paging', undefined, 'application/problem+json')
  @Response<ProblemDto>(401, 'Missing or invalid credentials', undefined, 'application/problem+json')
  @Response<ProblemDto>(
    403,
    'The token is not ADMIN, or the API key lacks history:read or does not act for this bot (AGENT_NOT_ALLOWED)',
    undefined,
    'application/problem+json',
  )
  @Response<ProblemDto>(429, 'Too many failed authentications from this address; see Retry-After', undefined, 'application/problem+json')
  @Response<ProblemDto>(503, 'The conversation log is unreachable', undefined, 'application/problem+json')
  public async getConversationMessages(
    @Path() agentId: AgentId,
    @Path() clientId: string,
    @Request() req: ExRequest,
    @Query() page?: number,
    @Query() perPage?: number,
  ): Promise<PaginationModel<ConversationMessageDto>> {
    assertActsFor(principalOf(req), agentId, 'read the conversations of');
    return this.services.conversations.page(agentId, clientId, pageRequest(page, perPage));
  }

  /**
   * Erases the conversation of `clientId` with the bot (not the bot's broadcasts, which belong to
   * every conversation). Idempotent: 204 whether or not it existed. An API key deletes only for the
   * bots in its `agentIds` (else 403 `AGENT_NOT_ALLOWED`, nothing deleted).
   * @summary Delete a conversation
   * @param clientId The user's clientId (their JWT `sub`, or `admin`).
   */
  @Delete('{agentId}/conversations/{clientId}')
  @OperationId('deleteConversation')
  @Security('defaultBearerAuth', ['ADMIN'])
  @Security('api-key', ['history:write'])
  @SuccessResponse(204, 'Deleted')
  @Response<ProblemDto>(400, 'Invalid agentId', undefined, 'application/problem+json')
  @Response<ProblemDto>(401, 'Missing or invalid credentials', undefined, 'application/problem+json')
  @Response<ProblemDto>(
    403,
    'The token is not ADMIN, or the API key lacks history:write or does not act for this bot (AGENT_NOT_ALLOWED); nothing is deleted',
    undefined,
    'application/problem+json',
  )
  @Response<ProblemDto>(429, 'Too many failed authentications from this address; see Retry-After', undefined, 'application/problem+json')
  @Response<ProblemDto>(503, 'The conversation log is unreachable', undefined, 'application/problem+json')
  public async deleteConversation(@Path() agentId: AgentId, @Path() clientId: string, @Request() req: ExRequest): Promise<void> {
    assertActsFor(principalOf(req), agentId, 'delete the conversations of');
    await this.services.conversations.delete(agentId, clientId);
    this.setStatus(204);
  }
}
