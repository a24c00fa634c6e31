// Typed calls into a load generator process (bench/generator.mjs) over IPC: each command is
// answered with { id, result } or { id, error }; a call that gets no answer in time rejects, and
// every pending call rejects when the generator exits.

/** Wraps a forked or spawned generator `child` (IPC channel open) as `{ child, call(cmd, args, timeoutMs) }`. */
export function generatorClient(child, defaultTimeoutMs = 120_000) {
  let nextId = 0;
  const waiting = new Map();
  child.on('message', ({ id, result, error }) => {
    const w = waiting.get(id);
    if (!w) return;
    waiting.delete(id);
    if (error) w.reject(new Error(`generator: ${error}`));
    else w.resolve(result);
  });
  child.once('exit', (code) => {
    for (const w of waiting.values()) w.reject(new Error(`generator exited (${code})`));
  });
  return {
    child,
    call(cmd, args, timeoutMs = defaultTimeoutMs) {
      const id = ++nextId;
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`generator ${cmd} timed out`)), timeoutMs);
        waiting.set(id, {
          resolve: (v) => (clearTimeout(timer), resolve(v)),
          reject: (e) => (clearTimeout(timer), reject(e)),
        });
        child.send({ id, cmd, args });
      });
    },
  };
}
