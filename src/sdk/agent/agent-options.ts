import type { MessageData, MessagePart } from '../../protocol';
import type { DeltaRate } from './delta-budget';

export interface RelayAgentOptions {
  /** Origin of the hub, e.g. `https://relay.example.com`. */
  url: string;
  /** One of the hub's AGENT_API_KEYS, or a managed API key with the `agent:connect` scope for this bot. */
  apiKey: string;
  /** The bot this runtime serves. */
  agentId: string;
  /** Path prefix when the hub is mounted below the origin root (default none). */
  path?: string;
  /** Reconnect backoff: delays are uniform in [0, min(capMs, baseMs · 2^attempt)]. */
  backoff?: { baseMs?: number; capMs?: number };
  /** How many handled message ids are remembered to drop redeliveries (default 10,000). */
  dedupeSize?: number;
  /** Ack timeout of `reply`, `debug`, `activity` and the stream events (default 10 s). */
  ackTimeoutMs?: number;
  /** Stream writes made within this many milliseconds leave as one delta (default 25; 0 sends each write). */
  coalesceMs?: number;
  /** Largest delta in UTF-8 bytes (default 16384; keep it under the hub's MAX_MESSAGE_BYTES). */
  maxDeltaBytes?: number;
  /** Bytes a stream may have written and not yet acknowledged before `write` waits (default 65536). */
  highWaterBytes?: number;
  /** A delta asks the hub for an ack at least every this many deltas (default 16). */
  ackEvery?: number;
  /** Deltas per second this runtime keeps to; match the hub's STREAM_DELTA_RATE_* (default 180/s, burst 360). */
  deltaRate?: DeltaRate;
}

/** `stream` options: the message it answers, and data the stream starts with. */
export interface StreamOptions {
  replyTo?: string;
  data?: MessageData;
}

/** A reply with parts (the object form of {@link RelayAgent.reply}); `text` defaults to the text parts joined. */
export interface ReplyMessage {
  text?: string;
  parts?: MessagePart[];
  data?: MessageData;
  replyTo?: string;
}

/** How a stream batches and paces its writes (options of {@link RelayAgent}). */
export interface StreamTuning {
  /** Writes made within this many milliseconds go out as one `stream:delta` (0 sends each at once). */
  coalesceMs: number;
  /** Largest delta, in UTF-8 bytes; a longer write is cut (never inside a character). */
  maxDeltaBytes: number;
  /** Text written but not yet acknowledged by the hub beyond which `write` waits. */
  highWaterBytes: number;
  /** An ack is asked for at least every this many deltas (and every quarter of `highWaterBytes`). */
  ackEvery: number;
}

/** The streams' tuning from the options, defaults filled in; throws a `TypeError` on a value out of range. */
export function streamTuning(options: RelayAgentOptions): StreamTuning {
  const tuning = {
    coalesceMs: options.coalesceMs ?? 25,
    maxDeltaBytes: options.maxDeltaBytes ?? 16_384,
    highWaterBytes: options.highWaterBytes ?? 65_536,
    ackEvery: options.ackEvery ?? 16,
  };
  for (const [key, value] of Object.entries(tuning)) {
    const least = key === 'coalesceMs' ? 0 : 1;
    if (!Number.isFinite(value) || value < least) throw new TypeError(`RelayAgent: ${key} must be a number ≥ ${least}`);
  }
  if (tuning.maxDeltaBytes < 4) throw new TypeError('RelayAgent: maxDeltaBytes must hold a character (≥ 4)');
  return tuning;
}
