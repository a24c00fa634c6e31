import type Redis from 'ioredis';
import type { Command } from 'ioredis';

/** When a command was sent (`performance.now()`: monotonic ms), or {@link FAILED} once it has been failed. */
const SENT_AT = Symbol('relay-hub sentAt');
const FAILED = -1;

type Stamped = Command & { [SENT_AT]?: number };

/**
 * Fails the commands on `redis` that wait for a reply while Redis says nothing: a command fails
 * once `timeoutMs` have passed both since it was sent and since the connection last read anything,
 * with the error ioredis's own `commandTimeout` gives ("Command timed out"). So no caller waits on
 * a Redis that accepted the connection and stopped answering, and none is failed while Redis is
 * answering the commands queued before it: replies come in order, and with big messages on a busy
 * machine the queue of one connection can take seconds (docs/operations.md, "Redis command
 * deadlines"). ioredis's `commandTimeout` counts from the send alone, and arms and clears a Node
 * timer per command; here each command only gets its send time, and one interval per connection
 * looks at the oldest pending commands. A command of a silent Redis fails between `timeoutMs` and
 * `timeoutMs + checkEveryMs` after the later of its send and the last read. A failed command keeps
 * its place in the queue until its reply or the connection's end, as with ioredis's timer.
 */
export function failLateCommands(redis: Redis, timeoutMs: number, checkEveryMs = Math.max(10, Math.round(timeoutMs / 20))): void {
  const send = redis.sendCommand.bind(redis);
  redis.sendCommand = (command: Stamped, stream) => {
    // A command a Cluster sends again (redirection, failover) keeps its first send time.
    command[SENT_AT] ??= performance.now();
    return send(command, stream);
  };
  // Whether the connection read anything since the last check, and when a check last saw that.
  // A flag, not a clock reading per chunk read: the check stamps it, up to checkEveryMs late.
  let heard = false;
  let heardAt = performance.now();
  let listened: unknown;
  const listen = () => {
    // A new socket on each connect, read by ioredis from then on (a listener added before that
    // would set it flowing early).
    if (redis.stream === undefined || redis.stream === listened) return;
    listened = redis.stream;
    redis.stream.on('data', () => void (heard = true));
  };
  if (redis.status === 'connect' || redis.status === 'ready') listen();
  redis.on('connect', listen);
  const judge = () => {
    const now = performance.now();
    if (heard) {
      heard = false;
      heardAt = now;
    }
    const queue = redis.commandQueue;
    for (let i = 0; i < queue.length; i++) {
      const command = queue.peekAt(i)?.command as Stamped | undefined;
      const sentAt = command?.[SENT_AT];
      // Sent before this was installed (the connection's handshake) or failed already.
      if (command === undefined || sentAt === undefined || sentAt === FAILED) continue;
      if (now - Math.max(sentAt, heardAt) < timeoutMs) break;
      command[SENT_AT] = FAILED;
      if (!command.isResolved) command.reject(new Error('Command timed out'));
    }
  };
  // Judged in the turn's check phase, after its poll phase: a replica whose event loop was blocked
  // for a while reads what Redis answered meanwhile before its silence is judged.
  const check = setInterval(() => setImmediate(judge), checkEveryMs);
  check.unref();
  redis.once('end', () => clearInterval(check));
}
