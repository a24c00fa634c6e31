type Listener<T> = (payload: T) => void;

/**
 * A minimal typed event emitter. A throwing listener neither stops the other listeners nor breaks
 * the SDK's own event handling: its exception is rethrown on a fresh task, where the page's error
 * reporting sees it. `Events` maps each event name to the type of its single argument.
 */
export class Emitter<Events extends object> {
  private readonly listeners = new Map<keyof Events, Set<Listener<never>>>();

  /** Adds a listener; returns a function that removes it. */
  on<K extends keyof Events>(event: K, listener: Listener<Events[K]>): () => void {
    let set = this.listeners.get(event);
    if (!set) this.listeners.set(event, (set = new Set()));
    set.add(listener);
    return () => this.off(event, listener);
  }

  /** Removes a listener added with {@link on}. */
  off<K extends keyof Events>(event: K, listener: Listener<Events[K]>): void {
    this.listeners.get(event)?.delete(listener);
  }

  protected emit<K extends keyof Events>(event: K, payload: Events[K]): void {
    const set = this.listeners.get(event);
    if (!set) return;
    for (const listener of [...set]) {
      try {
        (listener as Listener<Events[K]>)(payload);
      } catch (err) {
        setTimeout(() => {
          throw err;
        });
      }
    }
  }
}
