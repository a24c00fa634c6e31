import { Body, Controller, OperationId, Path, Post, Response, Route, Security, SuccessResponse, Tags } from '@tsoa/runtime';
import { MAX_JSON_DEPTH } from '../../relay/payload-limits';
import { PayloadTooLargeError, ValidationError } from '../errors';
import type { HttpServices } from '../http.services';
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
   * of the bot, on every replica, exactly like an agent runtime's `reply`.
   * @summary Publish a message as the agent
   */
  @Post('{agentId}/messages')
  @OperationId('publishAgentMessage')
  @SuccessResponse(202, 'Accepted')
  @Response<ProblemDto>(400, 'Invalid agentId or body, or data nested too deeply', undefined, 'application/problem+json')
  @Response<ProblemDto>(401, 'Missing or unknown API key', undefined, 'application/problem+json')
  @Response<ProblemDto>(429, 'Too many failed authentications from this address; see Retry-After', undefined, 'application/problem+json')
  @Response<ProblemDto>(403, 'The API key lacks the messages:publish scope', undefined, 'application/problem+json')
  @Response<ProblemDto>(413, 'Body larger than REST_BODY_LIMIT_BYTES, or text/data above MAX_MESSAGE_BYTES', undefined, 'application/problem+json')
  @Response<ProblemDto>(415, 'Body is not JSON', undefined, 'application/problem+json')
  public async publishAgentMessage(@Path() agentId: AgentId, @Body() body: AgentMessageDto): Promise<SingleModel<PublishedMessageDto>> {
    const relay = this.services.relay();
    const refused = relay.replyError(body);
    if (refused?.error.code === 'INVALID_PAYLOAD') {
      throw new ValidationError([{ path: 'body.data', message: `nests deeper than ${MAX_JSON_DEPTH} levels` }]);
    }
    if (refused) throw new PayloadTooLargeError('text or text plus data exceeds MAX_MESSAGE_BYTES.');
    const { id, ts } = relay.publish(agentId, body);
    return single({ id, ts: new Date(ts) });
  }
}
