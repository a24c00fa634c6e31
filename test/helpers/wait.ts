/**
 * The tests' one polling helper and one sleep. Await an event where there is one (`nextEvent`,
 * `connected` in ./hub); poll with `waitFor` only for state that announces nothing (TTLs, readiness,
 * presence, a process's port); `sleep` only to pace a load or let a clock move past a deadline.
 */

/** Resolves after `ms` milliseconds (a pace or a clock to move on; never to wait for an event). */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** What a `waitFor` probe answers: `false`, `undefined` or `null` for "not yet", anything else is the result. */
export type Probed<T> = T | false | undefined | null;

/**
 * Calls `probe` every `intervalMs` (100 by default) until it answers something other than `false`,
 * `undefined` or `null`, and resolves with that; fails after `timeoutMs` naming `what`. A probe
 * that throws fails the wait (wrap it in `.catch(() => undefined)` where a refusal means "not yet").
 */
export async function waitFor<T>(
  probe: () => Probed<T> | Promise<Probed<T>>,
  timeoutMs: number,
  what = 'condition',
  intervalMs = 100,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== false && value !== undefined && value !== null) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(intervalMs);
  }
}
