import { RateBudgets } from '../limits/rate-budgets';
import type { Tally } from '../metrics/metrics';
import { BROADCAST_TO } from '../protocol';
import type { RelayContext, RelayNamespaces } from './relay.context';
import { Rooms } from './rooms';

/** Thrown by a publish the bot's delivery budget refused: nothing was logged or sent. */
export class DeliveryBudgetError extends Error {
  constructor(
    readonly agentId: string,
    /** When the budget lets the bot publish again. */
    readonly retryAfterMs: number,
  ) {
    super(`the bot "${agentId}" is over AGENT_DELIVERY_RATE_PER_S on this replica`);
    this.name = 'DeliveryBudgetError';
  }
}

/** How long a bot's client count read from shared presence is used before it is read again. */
const AUDIENCE_TTL_MS = 1000;

/** A bot's clients on every replica, as last read from shared presence. */
interface Audience {
  clients: number;
  readAt: number;
  reading: boolean;
}

/**
 * Each bot's deliveries on this replica, per second (AGENT_DELIVERY_RATE_PER_S, _BURST): whatever a
 * bot sends its users (a reply, a broadcast, an activity, a stream's start, deltas and end) costs one
 * delivery per client socket it goes to, so a broadcast to 500 clients costs 500. Over the budget,
 * the event is refused before it is logged or sent; a stream's end is never refused, only paid for. Without it one bot broadcasting `'*'` took
 * a replica's event loop for itself, and other bots' users waited seconds for their replies
 * (docs/operations.md, per-bot delivery budget, has the numbers).
 *
 * A broadcast costs the bot's client sockets on every replica: this replica's room, and in a
 * cluster the count in shared presence, read at most once a second per bot and never waited for
 * (until the first read answers, this replica's own count is used). A reply to one user costs that
 * user's sockets here, at least one.
 */
export class DeliveryBudget {
  private readonly budgets: RateBudgets | null;
  private readonly audiences = new Map<string, Audience>();
  private readonly limited: Tally;

  constructor(
    private readonly ctx: RelayContext,
    private readonly nsp: RelayNamespaces,
  ) {
    const { AGENT_DELIVERY_RATE_PER_S: ratePerS, AGENT_DELIVERY_RATE_BURST: burst } = ctx.config;
    this.budgets = ratePerS === 0 ? null : new RateBudgets({ ratePerS, burst });
    this.limited = ctx.metrics.rateLimited.bind({ scope: 'agent_delivery' });
  }

  /** Spends what a publish of `agentId` to `to` costs; throws {@link DeliveryBudgetError} when spent. */
  charge(agentId: string, to: string): void {
    if (this.budgets === null) return;
    const now = Date.now();
    if (this.budgets.take(agentId, now, this.cost(agentId, to, now))) return;
    this.limited.add();
    throw new DeliveryBudgetError(agentId, this.budgets.waitMs(agentId, now));
  }

  /** Pays for a delivery that must go (a stream's end) even over the budget: later ones wait the debt out. */
  spend(agentId: string, to: string): void {
    if (this.budgets === null) return;
    const now = Date.now();
    this.budgets.spend(agentId, now, this.cost(agentId, to, now));
  }

  private cost(agentId: string, to: string, now: number): number {
    const rooms = this.nsp.client.adapter.rooms;
    if (to !== BROADCAST_TO) return Math.max(1, rooms.get(Rooms.client(agentId, to))?.size ?? 0);
    const here = rooms.get(Rooms.clients(agentId))?.size ?? 0;
    return this.ctx.clustered ? Math.max(here, this.everywhere(agentId, now)) : here;
  }

  /** The bot's client sockets on every replica, as last read; a stale count is read again meanwhile. */
  private everywhere(agentId: string, now: number): number {
    let audience = this.audiences.get(agentId);
    if (audience === undefined) {
      // Bounded by the bots that publish through this replica; a rare flush keeps it so.
      if (this.audiences.size >= MAX_AUDIENCES) this.audiences.clear();
      audience = { clients: 0, readAt: 0, reading: false };
      this.audiences.set(agentId, audience);
    }
    if (!audience.reading && now - audience.readAt >= AUDIENCE_TTL_MS) {
      const reading = audience;
      reading.reading = true;
      this.ctx.store.presence.getAgent(agentId).then(
        ({ clients }) => Object.assign(reading, { clients, readAt: Date.now(), reading: false }),
        (err: unknown) => {
          reading.reading = false;
          reading.readAt = Date.now();
          this.ctx.metrics.redisErrors.inc({ component: 'delivery-budget' });
          this.ctx.handlerFailures.warn('delivery-budget', err, "could not read the bot's clients; charging this replica's");
        },
      );
    }
    return audience.clients;
  }
}

const MAX_AUDIENCES = 10_000;
