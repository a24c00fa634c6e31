import { Type } from '@sinclair/typebox';
import { AGENT_ID_PATTERN } from './names';

/** Shared pieces of the payload schemas. Times on the wire are ISO 8601 UTC; message ids UUIDv7. */

/** Optional structured data: any JSON object (not an array, not null). */
export const MessageDataSchema = Type.Object({}, { additionalProperties: true, title: 'MessageData', description: 'Any JSON object.' });

/** A hub-assigned message id (UUIDv7). Only on outbound payloads: inbound ids are checked by length. */
export const MessageIdSchema = Type.String({ format: 'uuid', description: 'Hub-assigned message id (UUIDv7).' });

/** An ISO 8601 UTC time. */
export const TimeSchema = Type.String({ format: 'date-time' });

/** `agentId`, with the pattern the handshake checks. */
export const AgentIdSchema = Type.String({ pattern: AGENT_ID_PATTERN.source, description: 'The bot: 1–128 chars of [A-Za-z0-9._:-].' });

/** A rating of a bot message. */
export const RatingSchema = Type.Union([Type.Literal('up'), Type.Literal('down')], { title: 'Rating' });

/** What `activity` says the bot is doing. */
export const ActivityStateSchema = Type.Union(
  [Type.Literal('thinking'), Type.Literal('typing'), Type.Literal('tool'), Type.Literal('idle')],
  { title: 'ActivityState', description: "What the bot is doing; 'idle' clears it." },
);

/** How a streamed message ended. */
export const StreamStatusSchema = Type.Union(
  [Type.Literal('complete'), Type.Literal('error'), Type.Literal('cancelled'), Type.Literal('interrupted'), Type.Literal('timeout')],
  {
    title: 'StreamStatus',
    description:
      'complete, error or cancelled as the runtime ended it (cancelled: stopped by the user); interrupted: the runtime left; timeout: idle or too long (the hub ended it).',
  },
);
