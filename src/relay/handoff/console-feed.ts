import type { Socket } from 'socket.io';
import { Events, type ClientInboundMessage, type ConversationControl, type DebugTrace } from '../../protocol';
import type { RelayContext, RelayNamespaces } from '../relay.context';
import { Rooms } from '../rooms';

/** How long a console's `conversation:watch` holds without being renewed (the console renews it every 30 s). */
export const WATCH_LEASE_MS = 90_000;

/** The server-side event that tells every replica a conversation is followed (Socket.IO serverSideEmit). */
const WATCHED = 'relay:watched';

/**
 * What operator consoles receive (docs/handoff.md): changes of control and debug traces go to every
 * console of the bot; messages of conversations handed off too; the messages and streams of a
 * conversation a console follows (`conversation:watch`) to the consoles following it.
 *
 * A stream's deltas are sent by the replica holding its runtime, which learns that a conversation is
 * followed from the replica the console is on (a server-side emit, renewed with the console's lease):
 * without that, every delta of every conversation would be published to a followers' room nobody
 * is in. The leases are this hub instance's, never module state.
 */
export class ConsoleFeed {
  /** `agentId#clientId` → until when a console follows it (ms). */
  private readonly watched = new Map<string, number>();

  constructor(
    private readonly ctx: RelayContext,
    private readonly nsp: RelayNamespaces,
  ) {
    nsp.operator.on(WATCHED, (agentId: unknown, clientId: unknown, untilMs: unknown) => {
      if (typeof agentId === 'string' && typeof clientId === 'string' && typeof untilMs === 'number')
        this.lease(agentId, clientId, untilMs);
    });
  }

  /** Makes `socket` (a console of `agentId`) follow `clientId`'s conversation, leaving the one it followed. */
  async watch(socket: Socket, agentId: string, previous: string | undefined, clientId: string): Promise<void> {
    if (previous !== undefined && previous !== clientId) await socket.leave(Rooms.watchers(agentId, previous));
    await socket.join(Rooms.watchers(agentId, clientId));
    const untilMs = Date.now() + WATCH_LEASE_MS;
    this.lease(agentId, clientId, untilMs);
    if (this.ctx.clustered) this.nsp.operator.serverSideEmit(WATCHED, agentId, clientId, untilMs);
  }

  /** Whether a console anywhere follows the conversation (as far as this replica has heard). */
  watchedHere(agentId: string, clientId: string): boolean {
    const key = `${agentId}#${clientId}`;
    const until = this.watched.get(key);
    if (until === undefined) return false;
    if (until > Date.now()) return true;
    this.watched.delete(key);
    return false;
  }

  /** A message of a conversation: to its followers, and to every console of the bot when it is handed off. */
  message(agentId: string, clientId: string, message: ClientInboundMessage, handedOff: boolean): void {
    const watched = this.watchedHere(agentId, clientId);
    if (!watched && !handedOff) return;
    const rooms = [...(watched ? [Rooms.watchers(agentId, clientId)] : []), ...(handedOff ? [Rooms.operators(agentId)] : [])];
    this.nsp.operator.to(rooms).emit(Events.conversationMessage, { clientId, message });
  }

  /** A stream event (`message:start`, `message:delta`, `message:part`, `message:end`) of a conversation, to its followers. */
  stream(
    agentId: string,
    clientId: string,
    event: 'message:start' | 'message:delta' | 'message:part' | 'message:end',
    payload: unknown,
  ): void {
    if (this.watchedHere(agentId, clientId)) this.nsp.operator.to(Rooms.watchers(agentId, clientId)).emit(event, payload);
  }

  control(change: ConversationControl): void {
    this.nsp.operator.to(Rooms.operators(change.agentId)).emit(Events.conversationControl, change);
  }

  debug(trace: DebugTrace): void {
    this.nsp.operator.to(Rooms.operators(trace.agentId)).emit(Events.debug, trace);
  }

  private lease(agentId: string, clientId: string, untilMs: number): void {
    const key = `${agentId}#${clientId}`;
    if ((this.watched.get(key) ?? 0) < untilMs) this.watched.set(key, untilMs);
    // Expired leases go as they are read; a sweep here keeps the map to the leases alive.
    if (this.watched.size > 1000) for (const [k, until] of this.watched) if (until <= Date.now()) this.watched.delete(k);
  }
}
