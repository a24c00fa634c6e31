import type Redis from 'ioredis';
import type { Command } from 'ioredis';

/** When a command was sent, on its connection's {@link LoopClock}, or {@link FAILED} once it has been failed. */
const SENT_AT = Symbol('relay-hub sentAt');
const FAILED = -1;
/** ioredis's own message for a command that failed with its connection. */
const CONNECTION_CLOSED = 'Connection is closed.';

type Stamped = Command & { [SENT_AT]?: number };

/**
/**
 * Milliseconds of the event loop's responsive time: real time (`performance.now()`), except that
 * no more than `maxStepMs` passes between two ticks. A loop blocked by a long synchronous turn, or
 * starved of CPU, ticks late; the time beyond `maxStepMs` was not the peer's to answer in, since
 * nothing could read its answer, and is not counted.
 */
export class LoopClock {
  private at = 0;
  private lastTick = performance.now();

  constructor(private readonly maxStepMs: number) {}

  /** Called by the owner's interval: advances the clock by the time since the last tick, at most `maxStepMs`. */
  tick(): number {
    this.at = this.now();
    this.lastTick = performance.now();
    return this.at;
  }

  /** The clock's time; never less than an earlier reading, never more than the next tick's. */
  now(): number {
    return this.at + Math.min(performance.now() - this.lastTick, this.maxStepMs);
  }
}

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
 *
 * A slow event loop is not a slow Redis either (docs/architecture.md, "When Redis fails"): the time
 * is that of a {@link LoopClock}, so the seconds of a blocked or CPU-starved turn, in which no reply
 * could be read, do not count against a command; and commands are judged in the check phase
 * (`setImmediate`), after the poll phase has read the replies already in the socket. The interval
 * runs in the timers phase, before that poll phase: judging there failed commands whose replies had
 * arrived.
 *
 * A command still waiting for its reply when the connection closes fails then ("Connection is
 * closed."): with `autoResendUnfulfilledCommands` off it is never sent again, and ioredis rejects it
 * only at every `maxRetriesPerRequest + 1`-th close; otherwise it drops the queue at the reconnect
 * with the command unsettled for good, out of reach of the check above (a stream delta's append
 * lost that way let the stream's end be acknowledged without it: docs/streaming.md, "Redis
 * unreachable"). Redis may or may not have run it, as with a timeout.
 */
export function failLateCommands(redis: Redis, timeoutMs: number, checkEveryMs = Math.max(10, Math.round(timeoutMs / 20))): void {
  const clock = new LoopClock(2 * checkEveryMs);
  const send = redis.sendCommand.bind(redis);
  redis.sendCommand = (command: Stamped, stream) => {
    // A command a Cluster sends again (redirection, failover) keeps its first send time.
    command[SENT_AT] ??= clock.now();
    return send(command, stream);
  };
  // Whether the connection read anything since the last check, and when a check last saw that.
  // A flag, not a clock reading per chunk read: the check stamps it, up to checkEveryMs late.
  let heard = false;
  let heardAt = clock.now();
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
  const judge = (now: number) => {
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
  // Ticked in the timers phase (its lateness is the loop's), judged in the check phase.
  const check = setInterval(() => setImmediate(judge, clock.tick()), checkEveryMs);
  check.unref();
  redis.once('end', () => clearInterval(check));
  if (!redis.options.autoResendUnfulfilledCommands) {
    // ioredis emits `close` before it hands the queue to the reconnect (closeHandler).
    redis.on('close', () => {
      const queue = redis.commandQueue;
      for (let i = 0; i < queue.length; i++) {
        const command = queue.peekAt(i)?.command as Stamped | undefined;
        if (command === undefined || command.isResolved || command[SENT_AT] === FAILED) continue;
        command[SENT_AT] = FAILED;
        command.reject(new Error(CONNECTION_CLOSED));
      }
    });
  }
}
