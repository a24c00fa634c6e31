import { Controller, Get, OperationId, Path, Query, Response, Route, Security, Tags } from '@tsoa/runtime';
import type { AgentPresence } from '../../store/store';
import type { HttpServices } from '../http-services';
import type { AgentDto, AgentId } from '../models/agent.dto';
import type { PaginationModel, SingleModel } from '../models/envelope.dto';
import type { ProblemDto } from '../models/problem.dto';
import { pageOf, pageRequest, single } from '../services/pagination';

/** Bots and their connected runtimes and clients, over all replicas. ADMIN only. */
@Route('agents')
@Tags('Agents')
@Security('defaultBearerAuth', ['ADMIN'])
@Response<ProblemDto>(401, 'Missing, invalid or expired token', undefined, 'application/problem+json')
@Response<ProblemDto>(403, 'The token is not ADMIN, or its user is deactivated', undefined, 'application/problem+json')
@Response<ProblemDto>(429, 'Too many failed authentications from this address; see Retry-After', undefined, 'application/problem+json')
export class AgentsController extends Controller {
  constructor(private readonly services: HttpServices) {
    super();
  }

  /**
   * Bots with at least one connected runtime or client, sorted by agentId.
   * @summary List agents
   * @param page 1-based page number, at most 10000000.
   * @param perPage Page size, 1–100.
   * @param online Only bots with (true) or without (false) a connected runtime.
   * @isInt page
   * @minimum page 1
   * @maximum page 10000000
   * @isInt perPage
   * @minimum perPage 1
   * @maximum perPage 100
   */
  @Get()
  @OperationId('getAgents')
  @Response<ProblemDto>(400, 'Invalid paging or filter', undefined, 'application/problem+json')
  public async getAgents(@Query() page?: number, @Query() perPage?: number, @Query() online?: boolean): Promise<PaginationModel<AgentDto>> {
    const agents = (await this.services.store.presence.listAgents()).map(toDto);
    return pageOf(online === undefined ? agents : agents.filter((a) => a.online === online), pageRequest(page, perPage));
  }

  /**
   * A bot nobody is connected to is reported offline with zero counts.
   * @summary Get an agent
   */
  @Get('{agentId}')
  @OperationId('getAgentById')
  @Response<ProblemDto>(400, 'Invalid agentId', undefined, 'application/problem+json')
  public async getAgentById(@Path() agentId: AgentId): Promise<SingleModel<AgentDto>> {
    return single(toDto(await this.services.store.presence.getAgent(agentId)));
  }
}

function toDto(presence: AgentPresence): AgentDto {
  return { agentId: presence.agentId, online: presence.runtimes > 0, runtimes: presence.runtimes, clients: presence.clients };
}
