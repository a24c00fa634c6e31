import type { Namespace } from 'socket.io';
import type { RelayNamespaces } from '../relay/relay.context';
import type { LiveEntries, RedisPresenceStore } from '../store/redis/redis-presence.store';
import type { AgentStatusListener } from './infrastructure';
import type { RedisErrorReporter } from './redis-connections';

/**
 * Refreshes this replica's presence entries every third of their TTL (so they outlive it only
 * while the replica does) and re-registers them at once after Redis comes back, including sockets
 * that connected or whose registration failed while it was away. A refresh that finds a bot's last
 * runtimes expired (their replica died without removing them) announces the bot offline to its
 * clients on every replica; one that brings a bot back from none announces it online.
 */
export class PresenceKeeper {
  private timer?: NodeJS.Timeout;
  private running: Promise<void> | null = null;

  constructor(
    private readonly presence: RedisPresenceStore,
    private readonly namespaces: RelayNamespaces,
    private readonly announce: AgentStatusListener,
    private readonly replicaId: string,
    private readonly intervalMs: number,
    private readonly report: RedisErrorReporter,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.refresh(), this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** One refresh at a time; a call during a refresh joins it. */
  refresh(): Promise<void> {
    this.running ??= this.presence
      .refresh(this.live())
      .then((changes) => {
        for (const { agentId, online } of changes) this.announce(agentId, online);
      })
      .catch((err: unknown) => this.report('presence', err, 'presence refresh failed; entries may expire until Redis is back'))
      .finally(() => {
        this.running = null;
      });
    return this.running;
  }

  private live(): LiveEntries[] {
    const bots = new Map<string, LiveEntries>();
    const collect = (nsp: Namespace, kind: 'runtimes' | 'clients') => {
      for (const socket of nsp.sockets.values()) {
        const agentId = (socket.data as { agentId?: string } | undefined)?.agentId;
        if (!socket.connected || agentId === undefined) continue;
        let bot = bots.get(agentId);
        if (!bot) bots.set(agentId, (bot = { agentId, runtimes: [], clients: [] }));
        bot[kind].push({ socketId: socket.id, replicaId: this.replicaId });
      }
    };
    collect(this.namespaces.agent, 'runtimes');
    collect(this.namespaces.client, 'clients');
    return [...bots.values()];
  }
}
