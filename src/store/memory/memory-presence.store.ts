import type { AgentPresence, PresenceStore, RuntimeEntry } from '../store';

interface BotPresence {
  runtimes: Map<string, RuntimeEntry>;
  clients: Set<string>;
}

export class MemoryPresenceStore implements PresenceStore {
  private readonly bots = new Map<string, BotPresence>();

  async addRuntime(agentId: string, entry: RuntimeEntry): Promise<number> {
    const bot = this.bot(agentId);
    bot.runtimes.set(entry.socketId, entry);
    return bot.runtimes.size;
  }

  async removeRuntime(agentId: string, entry: RuntimeEntry): Promise<number> {
    const bot = this.bots.get(agentId);
    if (!bot) return 0;
    bot.runtimes.delete(entry.socketId);
    const count = bot.runtimes.size;
    this.forgetIfEmpty(agentId, bot);
    return count;
  }

  async listRuntimes(agentId: string): Promise<RuntimeEntry[]> {
    return this.runtimesNow(agentId);
  }

  /** {@link listRuntimes} without the promise, for the store's own intake. */
  runtimesNow(agentId: string): RuntimeEntry[] {
    const bot = this.bots.get(agentId);
    return bot ? [...bot.runtimes.values()] : [];
  }

  async addClient(agentId: string, entry: RuntimeEntry): Promise<void> {
    this.bot(agentId).clients.add(entry.socketId);
  }

  async removeClient(agentId: string, entry: RuntimeEntry): Promise<void> {
    const bot = this.bots.get(agentId);
    if (!bot) return;
    bot.clients.delete(entry.socketId);
    this.forgetIfEmpty(agentId, bot);
  }

  async listAgents(): Promise<AgentPresence[]> {
    return [...this.bots.keys()].sort().map((agentId) => this.presence(agentId));
  }

  async getAgent(agentId: string): Promise<AgentPresence> {
    return this.presence(agentId);
  }

  private presence(agentId: string): AgentPresence {
    const bot = this.bots.get(agentId);
    return { agentId, runtimes: bot?.runtimes.size ?? 0, clients: bot?.clients.size ?? 0 };
  }

  private bot(agentId: string): BotPresence {
    let bot = this.bots.get(agentId);
    if (!bot) {
      bot = { runtimes: new Map(), clients: new Set() };
      this.bots.set(agentId, bot);
    }
    return bot;
  }

  private forgetIfEmpty(agentId: string, bot: BotPresence): void {
    if (bot.runtimes.size === 0 && bot.clients.size === 0) this.bots.delete(agentId);
  }
}
