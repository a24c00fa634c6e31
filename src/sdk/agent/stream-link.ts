import type { Socket } from 'socket.io-client';
import {
  Events,
  type AgentApproval,
  type AgentToHubEvents,
  type HubToAgentEvents,
  type SendAck,
  type StreamDelta,
  type StreamDeltaAck,
  type StreamEnd,
  type StreamPart,
  type StreamPartAck,
  type StreamUpdate,
} from '../../protocol';
import type { AgentStream } from './agent-stream';
import type { DeltaBudget } from './delta-budget';

/** What a stream needs of its runtime: the socket's two events and the shared delta budget. */
export interface StreamLink {
  readonly budget: DeltaBudget;
  /** Sends a delta; `onAck` asks the hub for an ack and gets it, an error, or undefined on timeout. */
  delta(payload: StreamDelta, onAck?: (ack: StreamDeltaAck | undefined) => void): boolean;
  /** Sends a `stream:part` or `stream:update` (always acked); false when the connection is gone. */
  change(
    payload: { event: 'part'; body: StreamPart } | { event: 'update'; body: StreamUpdate },
    onAck: (ack: StreamPartAck | StreamDeltaAck | undefined) => void,
  ): boolean;
  /** The user's decision on approval `id`, as this runtime receives it (H→A `approval`). */
  decision(id: string): Promise<AgentApproval>;
  end(payload: StreamEnd): Promise<SendAck>;
  /** The stream is over; the runtime forgets it. */
  release(stream: AgentStream): void;
}

/** A stream's deltas and part changes on the runtime's socket, each ack awaited at most `ackTimeoutMs`. */
export function socketSends(
  socket: Socket<HubToAgentEvents, AgentToHubEvents>,
  ackTimeoutMs: number,
): Pick<StreamLink, 'delta' | 'change'> {
  return {
    delta: (payload, onAck) => {
      // A stream does not outlive its connection (the hub ends it `interrupted`); nothing may
      // wait in socket.io's buffer to be appended after a reconnect.
      if (!socket.connected) return false;
      if (!onAck) (socket.emit as (event: string, payload: unknown) => void)(Events.streamDelta, payload);
      else socket.timeout(ackTimeoutMs).emit(Events.streamDelta, payload, (err, ack) => onAck(err ? undefined : ack));
      return true;
    },
    change: ({ event, body }, onAck) => {
      if (!socket.connected) return false;
      const timed = socket.timeout(ackTimeoutMs);
      if (event === 'part') timed.emit(Events.streamPart, body, (err, ack) => onAck(err ? undefined : ack));
      else timed.emit(Events.streamUpdate, body, (err, ack) => onAck(err ? undefined : ack));
      return true;
    },
  };
}
