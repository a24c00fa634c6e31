import { cellTiming, type RateBudget } from '../../limits/rate-budgets';
import { hashTag, type RedisClient } from './redis-client';
import type { Intake, IntakeRequest, MessageIntake, DedupeRecord } from '../store';
import { luaScript } from './lua-script';
import type { RedisConversationLog } from './redis-conversation.store';
import { dedupeSeconds, type RedisDedupeStore } from './redis-dedupe.store';
import { parseRuntime, type RedisPresenceStore } from './redis-presence.store';
import { controlKey } from './redis-control.store';
import type { ControlState } from '../../protocol';

const INTAKE = luaScript('intake/intake');

/** What lua/intake/intake.lua returns, as JSON (the script's header says when each field is there). */
interface IntakeResult {
  limited?: true;
  quota?: true;
  existing?: string;
  /** Lua's cjson writes an empty list as `{}`. */
  runtimes?: string[] | Record<string, never>;
  appended?: number;
  subscribers?: number;
  picked?: number;
  handed?: true;
  receivers?: number;
  evicted?: string[] | Record<string, never>;
  control: ControlState;
}

/** A list from the script's JSON: cjson writes an empty one as `{}`. */
function listOf(list: string[] | Record<string, never> | undefined): string[] {
  return Array.isArray(list) ? list : [];
}

/**
 * {@link MessageIntake} as one script, so a client message costs one Redis command before delivery,
 * and before its runtime's replica has it when a {@link Handoff} is given.
 */
export class RedisMessageIntake implements MessageIntake {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    private readonly dedupe: RedisDedupeStore,
    private readonly presence: RedisPresenceStore,
    private readonly log: RedisConversationLog,
  ) {}

  async admit({ key, record, ttlS, clientId, message, subscribersOf, handoff, budget }: IntakeRequest): Promise<Intake> {
    const { agentId, sub } = key;
    const keys = [
      this.dedupe.key(key),
      this.presence.runtimes(agentId),
      ...this.log.appendKeys(agentId, clientId),
      this.budgetKey(agentId, sub),
      ...this.log.quotaKeys(agentId),
      controlKey(this.prefix, agentId, clientId),
    ];
    const spending = budget ? budgetArgs(budget) : ['', ''];
    const append = message === null ? ['', '', 0, 0] : this.log.appendArgs(message.id, JSON.stringify(message));
    const handing =
      handoff === null
        ? ['']
        : [
            handoff.seed,
            handoff.replicaId,
            handoff.channel.before,
            handoff.channel.after,
            handoff.request.before,
            handoff.request.after,
            handoff.request.at,
            handoff.request.observed,
          ];
    const quota = this.log.quotaArgs(agentId, clientId);
    const args = [JSON.stringify(record), dedupeSeconds(ttlS), ...append, subscribersOf ?? '', ...spending, ...quota, ...handing];
    const result = JSON.parse(await INTAKE.run<string>(this.redis, keys, args)) as IntakeResult;
    const { control } = result;
    if (result.limited) return { limited: true, existing: null, runtimes: [], logged: false, subscribers: null, handedTo: null, control };
    this.log.evicted(agentId, listOf(result.evicted));
    if (result.quota) return { quota: true, existing: null, runtimes: [], logged: false, subscribers: null, handedTo: null, control };
    const existing = result.existing === undefined ? null : (JSON.parse(result.existing) as DedupeRecord);
    const runtimes = listOf(result.runtimes).map(parseRuntime);
    const subscribers = result.subscribers ?? null;
    const picked = result.picked === undefined ? undefined : runtimes[result.picked - 1];
    const handedTo = result.handed && picked ? { runtime: picked, receivers: result.receivers ?? 0 } : null;
    const found = { existing, runtimes, subscribers, handedTo, control, ...(picked && { picked }) };
    if (result.appended === undefined) return { ...found, logged: false };
    await this.log.appended(agentId, clientId, result.appended);
    return { ...found, logged: true };
  }

  /** The budget of `sub`'s messages to the bot: one key per pair, in the bot's slot like the intake's others. */
  budgetKey(agentId: string, sub: string): string {
    return `${this.prefix}${hashTag(agentId)}:budget:${sub.length}:${sub}`;
  }
}

/** The budget as the script reads it: milliseconds per message and how far ahead the bucket may run. */
function budgetArgs(budget: RateBudget): [number, number] {
  const { intervalMs, toleranceMs } = cellTiming(budget);
  return [intervalMs, toleranceMs];
}
