import type { BotQuota } from '../bot-quota';

// The bot's storage quota on Redis (docs/adr/0109-storage-quota-per-bot.md), kept by the very scripts
// that write what it counts, so every replica sees one count and a relayed message still costs one
// round trip. Three keys beside the bot's others, in its hash slot:
//   …{<agentId>}:quota:bytes    hash: '#' the total, 'c:<clientId>' a conversation's bytes ('c:' alone:
//                               the broadcasts), 's:<id>' an open stream's
//   …{<agentId>}:quota:convs    sorted set of the conversations, by when their keys expire (ms)
//   …{<agentId>}:quota:streams  sorted set of the open streams, by when their keys expire (ms)
// Keys that expire cannot tell the count, so a script that finds the bot over its quota first forgets
// the entries whose keys expired (three seconds' grace for replicas' clocks), then drops the bot's least
// recently written conversations to make room. A conversation trimmed by XADD MAXLEN ~ has its count
// scaled by the entries it kept: exact for entries of one size, an estimate otherwise (the ADR).

/** The keys and arguments of {@link LUA_QUOTA}'s `quota_of` for one bot. */
export class RedisQuota {
  constructor(readonly limits: BotQuota) {}

  /** The three ledger keys of a bot, whose keys all start with `bot` (its hash tag). */
  keys(bot: string): string[] {
    return [`${bot}:quota:bytes`, `${bot}:quota:convs`, `${bot}:quota:streams`];
  }

  /** The four arguments: the bot's key prefix, max bytes, max conversations and the conversation (null: broadcasts). */
  args(bot: string, clientId: string | null): (string | number)[] {
    return [bot, this.limits.maxBytes, this.limits.maxConversations, clientId ?? ''];
  }
}
