import type { Namespace } from 'socket.io';
import { Events, type AgentStatus } from '../protocol';
import { Rooms } from './rooms';

/**
 * Tells every client of a bot, on every replica, that the bot came online or went offline. Used by
 * the relay (a runtime entering or leaving presence) and by the cluster's presence keeper (a dead
 * replica's runtimes expiring, or coming back after an outage).
 */
export class AgentStatusAnnouncer {
  constructor(private readonly clients: Namespace) {}

  announce(agentId: string, online: boolean): void {
    const status: AgentStatus = { agentId, online };
    this.clients.to(Rooms.clients(agentId)).emit(Events.agentStatus, status);
  }
}
