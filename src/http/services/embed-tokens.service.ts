import { randomUUID } from 'node:crypto';
import { agentAllowed, everyAgent } from '../../auth/agent-patterns';
import { durationSeconds } from '../../config/duration';
import { isReservedSub } from '../../auth/identity';
import type { JwtService } from '../../auth/jwt.service';
import { ForbiddenError, ValidationError } from '../errors';
import type { EmbedTokenDto, MintEmbedTokenDto } from '../models/auth.dto';

/** Lifetime of a minted token when the request names none. */
export const DEFAULT_EMBED_EXPIRES_IN = '15m';

/**
 * Mints browser client tokens for integrators' backends. Minted tokens never carry roles, so they
 * are never ADMIN whatever the request says; their lifetime is capped by MINT_MAX_EXPIRES_IN; their
 * `agentIds` claim stays within the bots of the minting key.
 */
export class EmbedTokensService {
  private readonly maxSeconds: number;

  constructor(
    private readonly jwt: JwtService,
    private readonly maxExpiresIn: string,
  ) {
    this.maxSeconds = durationSeconds(maxExpiresIn);
  }

  /** `keyAgents`: the patterns of the minting key (`["*"]` for a key that acts for every bot). */
  mint(keyAgents: readonly string[], body: MintEmbedTokenDto = {}): EmbedTokenDto {
    const expiresIn = body.expiresIn ?? DEFAULT_EMBED_EXPIRES_IN;
    const seconds = durationSeconds(expiresIn);
    if (seconds > this.maxSeconds) {
      throw new ValidationError([{ path: 'body.expiresIn', message: `must be at most ${this.maxExpiresIn} (MINT_MAX_EXPIRES_IN)` }]);
    }
    if (body.sub !== undefined && isReservedSub(body.sub)) {
      throw new ValidationError([{ path: 'body.sub', message: '"admin" is reserved' }]);
    }
    const agentIds = tokenAgents(keyAgents, body.agentIds);
    const sub = body.sub ?? `anon_${randomUUID()}`;
    const { token, expiresAt } = this.jwt.sign({ sub, email: body.email, agentIds }, seconds);
    return { token, expiresAt };
  }
}

/**
 * The token's `agentIds` claim: the bots asked for, each one the key acts for; without any, the
 * key's own patterns (the handshake matches them as patterns), or no claim for a key of every bot.
 */
function tokenAgents(keyAgents: readonly string[], asked: readonly string[] | undefined): string[] | undefined {
  if (asked === undefined) return everyAgent(keyAgents) ? undefined : [...keyAgents];
  const outside = asked.find((agentId) => !agentAllowed(keyAgents, agentId));
  if (outside !== undefined) {
    throw new ForbiddenError('AGENT_NOT_ALLOWED', `This API key may not mint tokens for the bot "${outside}".`);
  }
  return [...asked];
}
