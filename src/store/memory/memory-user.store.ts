import { DuplicateError, type UserQuery, type UserRecord, type UserStore } from '../store';

export class MemoryUserStore implements UserStore {
  private readonly users = new Map<string, UserRecord>();

  async list(query: UserQuery): Promise<{ items: UserRecord[]; total: number }> {
    const email = query.email?.toLowerCase();
    const q = query.q?.toLowerCase();
    const matching = [...this.users.values()]
      .filter((u) => email === undefined || u.email.toLowerCase() === email)
      .filter((u) => q === undefined || [u.id, u.email, u.name].some((f) => f.toLowerCase().includes(q)))
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
    return { items: matching.slice(query.offset, query.offset + query.limit), total: matching.length };
  }

  async get(id: string): Promise<UserRecord | null> {
    return this.users.get(id) ?? null;
  }

  async create(user: UserRecord): Promise<void> {
    if (this.users.has(user.id)) throw new DuplicateError('id');
    if (this.findByEmail(user.email)) throw new DuplicateError('email');
    this.users.set(user.id, { ...user });
  }

  async update(id: string, patch: Partial<Pick<UserRecord, 'email' | 'name' | 'phone'>>): Promise<UserRecord | null> {
    const user = this.users.get(id);
    if (!user) return null;
    if (patch.email !== undefined) {
      const owner = this.findByEmail(patch.email);
      if (owner && owner.id !== id) throw new DuplicateError('email');
    }
    const updated: UserRecord = { ...user, ...patch, updatedAt: new Date().toISOString() };
    this.users.set(id, updated);
    return updated;
  }

  async delete(id: string): Promise<UserRecord | null> {
    const user = this.users.get(id) ?? null;
    this.users.delete(id);
    return user;
  }

  private findByEmail(email: string): UserRecord | undefined {
    const wanted = email.toLowerCase();
    for (const user of this.users.values()) if (user.email.toLowerCase() === wanted) return user;
    return undefined;
  }
}
