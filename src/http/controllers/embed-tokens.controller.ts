import type { Request as ExRequest } from 'express';
import { Body, Controller, OperationId, Post, Request, Response, Route, Security, SuccessResponse, Tags } from '@tsoa/runtime';
import { keyAgentPatterns } from '../../auth/agent-patterns';
import type { HttpServices } from '../http-services';
import type { EmbedTokenDto, MintEmbedTokenDto } from '../models/auth.dto';
import type { SingleModel } from '../models/envelope.dto';
import type { ProblemDto } from '../models/problem.dto';
import { apiKeyOf } from '../principal';
import { single } from '../services/pagination';

/** Client tokens for browser embeds, minted by the integrator's backend. */
@Route('auth/embed')
@Tags('EmbedTokens')
@Security('api-key', ['embed:mint'])
export class EmbedTokensController extends Controller {
  constructor(private readonly services: HttpServices) {
    super();
  }

  /**
   * Mints a client JWT for the `/ws/client` handshake. `expiresIn` defaults to `15m` and may not
   * exceed MINT_MAX_EXPIRES_IN; `agentIds` restricts the bots the token may chat with, each one
   * the key acts for (else 403 `AGENT_NOT_ALLOWED`), and defaults to the key's own `agentIds`;
   * without `sub` the token is anonymous (`anon_<uuid>`). Minted tokens never carry roles.
   * @summary Mint an embed token
   */
  @Post('token')
  @OperationId('mintEmbedToken')
  @SuccessResponse(201, 'Created')
  @Response<ProblemDto>(
    400,
    'Invalid body, sub "admin" (in any case, spaces around it too), or expiresIn above MINT_MAX_EXPIRES_IN',
    undefined,
    'application/problem+json',
  )
  @Response<ProblemDto>(401, 'Missing or unknown API key', undefined, 'application/problem+json')
  @Response<ProblemDto>(429, 'Too many failed authentications from this address; see Retry-After', undefined, 'application/problem+json')
  @Response<ProblemDto>(
    403,
    'The API key lacks the embed:mint scope, or agentIds names a bot the key does not act for (AGENT_NOT_ALLOWED)',
    undefined,
    'application/problem+json',
  )
  @Response<ProblemDto>(413, 'Body larger than REST_BODY_LIMIT_BYTES', undefined, 'application/problem+json')
  @Response<ProblemDto>(415, 'Body is not JSON', undefined, 'application/problem+json')
  public async mintEmbedToken(@Request() req: ExRequest, @Body() body?: MintEmbedTokenDto): Promise<SingleModel<EmbedTokenDto>> {
    return single(this.services.embedTokens.mint(keyAgentPatterns(apiKeyOf(req)), body));
  }
}
