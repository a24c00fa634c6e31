import { hashTag, type RedisClient } from './redis-client';
import { DuplicateError, type UserQuery, type UserRecord, type UserStore } from '../store';
import { luaScript } from './lua-script';

// users: hash id → JSON (the record plus `emailKey`, its lower-cased email, so Lua never has to
// lower-case Unicode); emails: hash emailKey → id (uniqueness); order: sorted set, all scores 0,
// members `createdAt \n id`, so lexicographic order is creation order with the id breaking ties.

const CREATE = luaScript('user/create');

const UPDATE = luaScript('user/update');

const DELETE = luaScript('user/delete');

type Stored = UserRecord & { emailKey: string };

export class RedisUserStore implements UserStore {
  private readonly users: string;
  private readonly emails: string;
  private readonly order: string;

  constructor(
    private readonly redis: RedisClient,
    prefix: string,
  ) {
    // One hash tag: the scripts touch all three keys, so on a Cluster they share a slot.
    const tag = `${prefix}${hashTag('users')}`;
    this.users = `${tag}:records`;
    this.emails = `${tag}:email`;
    this.order = `${tag}:order`;
  }

  async list(query: UserQuery): Promise<{ items: UserRecord[]; total: number }> {
    if (query.email === undefined && query.q === undefined) {
      const [total, members] = await Promise.all([
        this.redis.zcard(this.order),
        query.limit > 0 ? this.redis.zrange(this.order, query.offset, query.offset + query.limit - 1) : Promise.resolve([]),
      ]);
      const ids = members.map((m) => m.slice(m.indexOf('\n') + 1));
      const raws = ids.length > 0 ? await this.redis.hmget(this.users, ...ids) : [];
      return { items: raws.filter((r): r is string => r !== null).map(parse), total };
    }
    // Filtered listings scan the users; an integrator's admin search, not a hot path.
    let candidates: UserRecord[];
    if (query.email !== undefined) {
      const id = await this.redis.hget(this.emails, emailKey(query.email));
      const user = id === null ? null : await this.get(id);
      candidates = user ? [user] : [];
    } else {
      candidates = Object.values(await this.redis.hgetall(this.users)).map(parse);
    }
    const q = query.q?.toLowerCase();
    const matching = candidates
      .filter((u) => q === undefined || [u.id, u.email, u.name].some((f) => f.toLowerCase().includes(q)))
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
    return { items: matching.slice(query.offset, query.offset + query.limit), total: matching.length };
  }

  async get(id: string): Promise<UserRecord | null> {
    const raw = await this.redis.hget(this.users, id);
    return raw === null ? null : parse(raw);
  }

  async create(user: UserRecord): Promise<void> {
    const key = emailKey(user.email);
    const stored: Stored = { ...user, emailKey: key };
    const result = await CREATE.run<string>(
      this.redis,
      [this.users, this.emails, this.order],
      [user.id, key, JSON.stringify(stored), `${user.createdAt}\n${user.id}`],
    );
    if (result === 'id' || result === 'email') throw new DuplicateError(result);
  }

  async update(id: string, patch: Partial<Pick<UserRecord, 'email' | 'name' | 'phone'>>): Promise<UserRecord | null> {
    const fields: Record<string, unknown> = {};
    if (patch.email !== undefined) fields.email = patch.email;
    if (patch.name !== undefined) fields.name = patch.name;
    // cjson cannot tell an absent key from null, so a cleared phone travels as an empty marker.
    if (patch.phone !== undefined) fields.phone = patch.phone === null ? CLEARED : patch.phone;
    const result = await UPDATE.run<string | null>(
      this.redis,
      [this.users, this.emails],
      [id, JSON.stringify(fields), patch.email === undefined ? '' : emailKey(patch.email), new Date().toISOString()],
    );
    if (result === null) return null;
    if (result === 'email') throw new DuplicateError('email');
    return parse(result);
  }

  async delete(id: string): Promise<UserRecord | null> {
    const raw = await DELETE.run<string | null>(this.redis, [this.users, this.emails, this.order], [id]);
    return raw === null ? null : parse(raw);
  }
}

const CLEARED = '\u0000cleared';

function emailKey(email: string): string {
  return email.toLowerCase();
}

function parse(raw: string): UserRecord {
  const { emailKey: _key, ...user } = JSON.parse(raw) as Stored;
  return { ...user, phone: user.phone === CLEARED || user.phone === undefined ? null : user.phone };
}
