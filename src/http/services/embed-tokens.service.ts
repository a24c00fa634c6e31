import { randomUUID } from 'node:crypto';
import { durationSeconds } from '../../auth/duration';
import type { JwtService } from '../../auth/jwt.service';
import { ADMIN_CLIENT_ID } from '../../protocol';
import { ValidationError } from '../errors';
import type { EmbedTokenDto, MintEmbedTokenDto } from '../models/auth.dto';

/** Lifetime of a minted token when the request names none. */
export const DEFAULT_EMBED_EXPIRES_IN = '15m';

/**
 * Mints browser client tokens for integrators' backends. Minted tokens never carry roles, so they
 * are never ADMIN whatever the request says; their lifetime is capped by MINT_MAX_EXPIRES_IN.
 */
export class EmbedTokensService {
  private readonly maxSeconds: number;

  constructor(
    private readonly jwt: JwtService,
    private readonly maxExpiresIn: string,
  ) {
    this.maxSeconds = durationSeconds(maxExpiresIn);
  }

  mint(body: MintEmbedTokenDto = {}): EmbedTokenDto {
    const expiresIn = body.expiresIn ?? DEFAULT_EMBED_EXPIRES_IN;
    const seconds = durationSeconds(expiresIn);
    if (seconds > this.maxSeconds) {
      throw new ValidationError([{ path: 'body.expiresIn', message: `must be at most ${this.maxExpiresIn} (MINT_MAX_EXPIRES_IN)` }]);
    }
    if (body.sub === ADMIN_CLIENT_ID) {
      throw new ValidationError([{ path: 'body.sub', message: '"admin" is reserved' }]);
    }
    const sub = body.sub ?? `anon_${randomUUID()}`;
    const { token, expiresAt } = this.jwt.sign({ sub, email: body.email, agentIds: body.agentIds }, seconds);
    return { token, expiresAt };
  }
}
