import type { Namespace } from 'socket.io';
import { ActivityStates, Events, type ActivityUpdate, type AgentActivity } from '../../protocol';
import { DeadlineQueue, type Deadline } from '../deadline-queue';
import { isoNow } from '../ids';
import { Rooms } from '../rooms';

interface Shown extends Deadline {
  agentId: string;
  clientId: string;
}

/**
 * What bots are doing for their users (docs/streaming.md): `agent:activity` to every tab of the
 * user on every replica, never logged. The replica where a runtime sent an activity clears it
 * itself with `idle` after ACTIVITY_TTL_MS, or when a message or stream of the bot to that user
 * leaves from here; one timer for all of them.
 */
export class ActivityTracker {
  private readonly shown = new Map<string, Shown>();
  private readonly deadlines = new DeadlineQueue();

  constructor(
    private readonly clients: Namespace,
    private readonly ttlMs: number,
  ) {}

  /** Shows `update` to the user's tabs; anything but idle is cleared after the TTL. */
  update(agentId: string, { to, state, label }: ActivityUpdate): void {
    const key = `${agentId} ${to}`;
    let shown = this.shown.get(key);
    if (state === ActivityStates.idle) {
      if (shown) this.forget(shown);
    } else {
      shown ??= { agentId, clientId: to, dueMs: 0, slot: -1, fire: () => this.clear(agentId, to) };
      this.shown.set(key, shown);
      this.deadlines.add(shown, Date.now() + this.ttlMs);
    }
    this.emit(agentId, to, { agentId, state, ...(label === undefined ? {} : { label }), ts: isoNow() });
  }

  /** A message or stream of the bot reaches the user: an activity shown from here ends with it. */
  reached(agentId: string, clientId: string): void {
    if (this.shown.size > 0 && this.shown.has(`${agentId} ${clientId}`)) this.clear(agentId, clientId);
  }

  stop(): void {
    for (const shown of this.shown.values()) this.deadlines.remove(shown);
    this.shown.clear();
  }

  private clear(agentId: string, clientId: string): void {
    const shown = this.shown.get(`${agentId} ${clientId}`);
    if (shown) this.forget(shown);
    this.emit(agentId, clientId, { agentId, state: ActivityStates.idle, ts: isoNow() });
  }

  private forget(shown: Shown): void {
    this.deadlines.remove(shown);
    this.shown.delete(`${shown.agentId} ${shown.clientId}`);
  }

  private emit(agentId: string, clientId: string, activity: AgentActivity): void {
    this.clients.to(Rooms.client(agentId, clientId)).emit(Events.agentActivity, activity);
  }
}
