import {
  Body,
  Controller,
  Delete,
  Get,
  OperationId,
  Path,
  Post,
  Query,
  Response,
  Route,
  Security,
  SuccessResponse,
  Tags,
} from '@tsoa/runtime';
import type { HttpServices } from '../http-services';
import type { ApiKeyDto, CreateApiKeyDto, CreatedApiKeyDto } from '../models/api-key.dto';
import type { PaginationModel, SingleModel } from '../models/envelope.dto';
import type { ProblemDto } from '../models/problem.dto';
import { pageOf, pageRequest, single } from '../services/pagination';

/** API keys for integrators' backends (`api-key` header). ADMIN only. */
@Route('api-keys')
@Tags('ApiKeys')
@Security('defaultBearerAuth', ['ADMIN'])
@Response<ProblemDto>(401, 'Missing, invalid or expired token', undefined, 'application/problem+json')
@Response<ProblemDto>(403, 'The token is not ADMIN, or its user is deactivated', undefined, 'application/problem+json')
@Response<ProblemDto>(429, 'Too many failed authentications from this address; see Retry-After', undefined, 'application/problem+json')
export class ApiKeysController extends Controller {
  constructor(private readonly services: HttpServices) {
    super();
  }

  /**
   * Lists keys oldest first. Secrets are never shown again.
   * @summary List API keys
   * @param page 1-based page number, at most 10000000.
   * @param perPage Page size, 1–100.
   * @param scope Only keys carrying this scope.
   * @isInt page
   * @minimum page 1
   * @maximum page 10000000
   * @isInt perPage
   * @minimum perPage 1
   * @maximum perPage 100
   */
  @Get()
  @OperationId('getApiKeys')
  @Response<ProblemDto>(400, 'Invalid paging or filter', undefined, 'application/problem+json')
  public async getApiKeys(
    @Query() page?: number,
    @Query() perPage?: number,
    @Query() scope?: 'embed:mint' | 'messages:publish' | 'agent:connect',
  ): Promise<PaginationModel<ApiKeyDto>> {
    const keys = await this.services.apiKeys.list();
    return pageOf(scope === undefined ? keys : keys.filter((k) => k.scopes.includes(scope)), pageRequest(page, perPage));
  }

  /**
   * One key by id, without its secret.
   * @summary Get an API key
   */
  @Get('{id}')
  @OperationId('getApiKeyById')
  @Response<ProblemDto>(404, 'No such key', undefined, 'application/problem+json')
  public async getApiKeyById(@Path() id: string): Promise<SingleModel<ApiKeyDto>> {
    return single(await this.services.apiKeys.get(id));
  }

  /**
   * Creates a key with the given scopes. The secret is in `key`, shown only in this response;
   * the hub stores a hash.
   * @summary Create an API key
   */
  @Post()
  @OperationId('createApiKey')
  @SuccessResponse(201, 'Created')
  @Response<ProblemDto>(400, 'Invalid body', undefined, 'application/problem+json')
  @Response<ProblemDto>(413, 'Body larger than REST_BODY_LIMIT_BYTES', undefined, 'application/problem+json')
  @Response<ProblemDto>(415, 'Body is not JSON', undefined, 'application/problem+json')
  public async createApiKey(@Body() body: CreateApiKeyDto): Promise<SingleModel<CreatedApiKeyDto>> {
    return single(await this.services.apiKeys.create(body));
  }

  /**
   * Revokes the key at once and returns it. Agent runtimes connected with it, on any replica, get
   * `session:closed` `API_KEY_REVOKED` and are disconnected.
   * @summary Delete an API key
   */
  @Delete('{id}')
  @OperationId('deleteApiKey')
  @Response<ProblemDto>(404, 'No such key', undefined, 'application/problem+json')
  public async deleteApiKey(@Path() id: string): Promise<SingleModel<ApiKeyDto>> {
    return single(await this.services.apiKeys.delete(id));
  }
}
