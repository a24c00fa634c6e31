import type { Request as ExRequest } from 'express';
import { Controller, Get, OperationId, Request, Response, Route, Security, Tags } from '@tsoa/runtime';
import type { SingleModel } from '../models/envelope.dto';
import type { MeDto } from '../models/auth.dto';
import type { ProblemDto } from '../models/problem.dto';
import { identityOf } from '../principal';
import { single } from '../services/pagination';

/** The caller's own identity. */
@Route('auth')
@Tags('Auth')
@Security('defaultBearerAuth')
export class AuthController extends Controller {
  /**
   * Returns the identity the hub derives from the bearer token, exactly as the `/ws/client`
   * handshake would: `clientId` is `admin` for ADMIN tokens.
   * @summary Who am I
   */
  @Get('me')
  @OperationId('me')
  @Response<ProblemDto>(401, 'Missing, invalid or expired token', undefined, 'application/problem+json')
  @Response<ProblemDto>(429, 'Too many failed authentications from this address; see Retry-After', undefined, 'application/problem+json')
  @Response<ProblemDto>(403, 'The user is deactivated', undefined, 'application/problem+json')
  public async me(@Request() req: ExRequest): Promise<SingleModel<MeDto>> {
    const identity = identityOf(req);
    return single({
      clientId: identity.clientId,
      sub: identity.sub,
      ...(identity.email === undefined ? {} : { email: identity.email }),
      roles: identity.roles,
      tokenExpiresAt: identity.expiresAtMs === null ? null : new Date(identity.expiresAtMs),
    });
  }
}
