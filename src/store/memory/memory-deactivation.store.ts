import type { DeactivationStore } from '../store';

export class MemoryDeactivationStore implements DeactivationStore {
  private readonly subs = new Set<string>();

  async isDeactivated(sub: string): Promise<boolean> {
    return this.subs.has(sub);
  }

  async deactivatedAmong(subs: readonly string[]): Promise<Set<string>> {
    return new Set(subs.filter((sub) => this.subs.has(sub)));
  }

  async deactivate(sub: string): Promise<void> {
    this.subs.add(sub);
  }

  async activate(sub: string): Promise<void> {
    this.subs.delete(sub);
  }
}
