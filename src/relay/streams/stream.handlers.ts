import type { Socket } from 'socket.io';
import { errorAck, Events } from '../../protocol';
import { isActivityUpdate, isStreamDelta, isStreamEnd, isStreamPart, isStreamStart, isStreamUpdate } from '../../protocol/schemas';
import { guardEvent, type GuardOptions } from '../event-guard';
import { DeliveryBudgetError, type DeliveryBudget } from '../delivery-budget';
import type { ActivityTracker } from './activity-tracker';
import type { StreamService } from './stream.service';

/** The parts of an agent socket's guard every event shares (bucket, logger, metrics). */
type AgentGuard = Omit<GuardOptions<unknown>, 'event' | 'validate'>;

/**
 * A runtime's streamed replies and activity (docs/streaming.md). Deltas count against their own
 * token bucket (STREAM_DELTA_RATE_*), separate from replies; a delta is acked only when the runtime
 * asked for an ack. Activity, like every stream event, spends the bot's delivery budget.
 */
export function registerStreamHandlers(
  socket: Socket,
  agentId: string,
  guard: AgentGuard,
  streams: StreamService,
  activity: ActivityTracker,
  deliveries: DeliveryBudget,
  deltaBurst: number,
): void {
  socket.on(
    Events.streamStart,
    guardEvent({ ...guard, event: Events.streamStart, validate: isStreamStart }, (payload) => streams.start(socket, agentId, payload)),
  );
  socket.on(
    Events.streamDelta,
    guardEvent(
      { ...guard, bucket: streams.bucketOf(socket.id), maxStrikes: deltaBurst, event: Events.streamDelta, validate: isStreamDelta },
      (payload) => streams.delta(socket, payload),
    ),
  );
  // Parts and updates share the deltas' bucket: they are a stream's changes like deltas.
  socket.on(
    Events.streamPart,
    guardEvent(
      { ...guard, bucket: streams.bucketOf(socket.id), maxStrikes: deltaBurst, event: Events.streamPart, validate: isStreamPart },
      (payload) => streams.part(socket, payload),
    ),
  );
  socket.on(
    Events.streamUpdate,
    guardEvent(
      { ...guard, bucket: streams.bucketOf(socket.id), maxStrikes: deltaBurst, event: Events.streamUpdate, validate: isStreamUpdate },
      (payload) => streams.update(socket, payload),
    ),
  );
  socket.on(
    Events.streamEnd,
    guardEvent({ ...guard, event: Events.streamEnd, validate: isStreamEnd }, (payload) => streams.end(socket, payload)),
  );
  socket.on(
    Events.activity,
    guardEvent({ ...guard, event: Events.activity, validate: isActivityUpdate }, (payload) => {
      try {
        deliveries.charge(agentId, payload.to);
      } catch (err) {
        if (err instanceof DeliveryBudgetError) return errorAck('RATE_LIMITED', err.message);
        throw err;
      }
      activity.update(agentId, payload);
      return { ok: true };
    }),
  );
}
