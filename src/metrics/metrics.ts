import { totalmem } from 'node:os';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry, type CounterConfiguration, type LabelValues } from 'prom-client';

/** A replica's memory limit and the headroom left under it (src/limits/memory-pressure.ts). */
export interface MemoryGauges {
  readonly limit: number;
  headroom(): number;
}

/** Without a hub's {@link MemoryGauges}: the cgroup's limit, else the machine's memory. */
function machineLimit(): number {
  return Math.min(process.constrainedMemory() || Infinity, totalmem());
}

/** The checks behind /health/ready, by name; the replica is ready when all of them pass. */
export type ReadinessChecks = () => Promise<Record<string, boolean>>;

/** One label set of a {@link TalliedCounter}, bound once and counted in a plain number. */
export interface Tally {
  add(count?: number): void;
}

/**
 * A counter for the per-message path. prom-client hashes the label values on every `inc`, several
 * times per relayed message; a {@link Tally} bound to a label set once ({@link TalliedCounter.bind})
 * instead adds to a plain number, and the tallies are added to the counter when it is collected
 * (every scrape, every `get()`), so what Prometheus reads is the same.
 */
export class TalliedCounter<T extends string> extends Counter<T> {
  private readonly tallies: { labels: LabelValues<T>; count: number }[] = [];

  constructor(config: CounterConfiguration<T>) {
    super({
      ...config,
      collect() {
        (this as TalliedCounter<T>).fold();
      },
    });
  }

  /** A tally of `labels`; bind once (per hub, per event), add on every message. */
  bind(labels: LabelValues<T>): Tally {
    const tally = { labels, count: 0 };
    this.tallies.push(tally);
    return {
      add: (count = 1) => {
        tally.count += count;
      },
    };
  }

  private fold(): void {
    for (const tally of this.tallies) {
      if (tally.count === 0) continue;
      this.inc(tally.labels, tally.count);
      tally.count = 0;
    }
  }
}

/**
 * Prometheus metrics of one hub. Each hub has its own registry so several hubs can run in one
 * process (tests) without sharing counters.
 */
export class HubMetrics {
  readonly registry = new Registry();

  readonly connections = new Gauge({
    name: 'relay_connections',
    help: 'Connected sockets by namespace',
    labelNames: ['namespace'] as const,
    registers: [this.registry],
  });

  readonly handshakes = new Counter({
    name: 'relay_handshakes_total',
    help: 'Handshakes by namespace, result and rejection code',
    labelNames: ['namespace', 'result', 'code'] as const,
    registers: [this.registry],
  });

  readonly engineRefusals = new Counter({
    name: 'relay_engine_refusals_total',
    help: 'Connections refused by the connection limits (engine connections before the Socket.IO handshake, namespace sockets at theirs), while draining, or for the default namespace, by reason',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });

  readonly slowConsumerCloses = new Counter({
    name: 'relay_slow_consumer_closes_total',
    help: 'Sockets whose transport was closed because more than MAX_SOCKET_BUFFER_BYTES (MAX_AGENT_SOCKET_BUFFER_BYTES for runtimes) were queued for the peer, by namespace',
    labelNames: ['namespace'] as const,
    registers: [this.registry],
  });

  readonly messages = new TalliedCounter({
    name: 'relay_messages_total',
    help: 'Relayed messages by direction (client_to_agent, agent_to_client, debug)',
    labelNames: ['direction'] as const,
    registers: [this.registry],
  });

  readonly acks = new TalliedCounter({
    name: 'relay_acks_total',
    help: 'Acks sent by event and result (ok or an error code)',
    labelNames: ['event', 'result'] as const,
    registers: [this.registry],
  });

  readonly redisErrors = new Counter({
    name: 'relay_redis_errors_total',
    help: 'Redis errors by component',
    labelNames: ['component'] as const,
    registers: [this.registry],
  });

  readonly subscriptionGap = new Gauge({
    name: 'relay_redis_subscription_gap',
    help: "With Redis: 1 while this replica restores pub/sub subscriptions it lost (its subscriber connection dropped, a Redis Cluster shard's subscriber connection was lost in a failover or a node restart, Redis moved a subscribed slot to another master, or the canary found them gone) and answers client handshakes SERVER_UNAVAILABLE, else 0",
    registers: [this.registry],
  });

  readonly subscriptionRecovery = new Histogram({
    name: 'relay_redis_subscription_recovery_seconds',
    help: 'With Redis: seconds from losing pub/sub subscriptions to having every one back, by what noticed the loss (connection, shard, moved, canary)',
    labelNames: ['trigger'] as const,
    buckets: [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300],
    registers: [this.registry],
  });

  readonly dropped = new Counter({
    name: 'relay_dropped_events_total',
    help: 'Inbound events dropped without an ack (no ack callback given), by reason',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });

  readonly controlChanges = new Counter({
    name: 'relay_control_changes_total',
    help: 'Changes of who answers a conversation (docs/handoff.md), by the state entered (bot, waiting, human) and cause (handoff, takeover, release, idle)',
    labelNames: ['to', 'cause'] as const,
    registers: [this.registry],
  });

  readonly logAppends = new TalliedCounter({
    name: 'relay_log_appends_total',
    help: 'Conversation log appends by author (user, agent, operator, system) and result (ok, error); an error means the sender got SERVER_UNAVAILABLE',
    labelNames: ['author', 'result'] as const,
    registers: [this.registry],
  });

  readonly replays = new Counter({
    name: 'relay_replays_total',
    help: 'Client handshakes with lastMessageId, by whether the missed messages were replayed (recovered true or false)',
    labelNames: ['recovered'] as const,
    registers: [this.registry],
  });

  readonly replayedMessages = new Counter({
    name: 'relay_replayed_messages_total',
    help: 'Messages replayed to reconnecting clients',
    registers: [this.registry],
  });

  readonly historyReads = new Counter({
    name: 'relay_history_reads_total',
    help: 'History pages read, by source (socket history event, rest)',
    labelNames: ['source'] as const,
    registers: [this.registry],
  });

  readonly streamsStarted = new Counter({
    name: 'relay_streams_started_total',
    help: 'Streamed replies started (stream:start accepted)',
    registers: [this.registry],
  });

  readonly streamsEnded = new Counter({
    name: 'relay_streams_ended_total',
    help: 'Streamed replies ended, by status (complete, error, cancelled, interrupted, timeout)',
    labelNames: ['status'] as const,
    registers: [this.registry],
  });

  readonly streamsOpen = new Gauge({
    name: 'relay_streams_open',
    help: 'Streams open on this replica (owned by a runtime connected here)',
    registers: [this.registry],
  });

  readonly streamDeltas = new TalliedCounter({
    name: 'relay_stream_deltas_total',
    help: 'Stream deltas by direction: in (from runtimes to this replica), out (emitted to client sockets of this replica)',
    labelNames: ['direction'] as const,
    registers: [this.registry],
  });

  readonly streamStops = new Counter({
    name: 'relay_stream_stops_total',
    help: 'Stop requests from users, by result (routed, ended by the hub after the grace, not_found)',
    labelNames: ['result'] as const,
    registers: [this.registry],
  });

  readonly feedback = new Counter({
    name: 'relay_feedback_total',
    help: 'Feedback on bot messages by rating (up, down, none for a withdrawn rating)',
    labelNames: ['rating'] as const,
    registers: [this.registry],
  });

  /** Set by the hub ({@link HubMetrics.readFrom}): the checks /health/ready answers from. */
  private readinessChecks: ReadinessChecks | undefined;

  // Both asked at scrape time, so an unready replica that Prometheus can still reach says why.
  readonly readinessCheck = new Gauge({
    name: 'relay_readiness_check',
    help: 'Each check behind /health/ready (notDraining, redisPubSub, …): 1 passing, 0 failing',
    labelNames: ['check'] as const,
    registers: [this.registry],
    collect: async () => {
      for (const [check, passing] of Object.entries((await this.readinessChecks?.()) ?? {})) {
        this.readinessCheck.set({ check }, passing ? 1 : 0);
      }
    },
  });

  readonly ready = new Gauge({
    name: 'relay_ready',
    help: '1 when this replica answers /health/ready with 200 (every relay_readiness_check passing), else 0',
    registers: [this.registry],
    collect: async () => {
      const checks = await this.readinessChecks?.();
      if (checks) this.ready.set(Object.values(checks).every(Boolean) ? 1 : 0);
    },
  });

  /** What {@link memoryLimit} and {@link memoryHeadroom} read on each scrape (set by the hub). */
  private memory: MemoryGauges | null = null;

  // The limit memory is measured against: the OOM killer acts on the container's, not on V8's heap limit.
  readonly memoryLimit: Gauge = new Gauge({
    name: 'relay_memory_limit_bytes',
    help: "Memory this replica may use: MEMORY_LIMIT_BYTES, else its cgroup's (container's) limit, else the machine's total memory",
    registers: [this.registry],
    collect: (): void => this.memoryLimit.set(this.memory?.limit ?? machineLimit()),
  });
  readonly memoryHeadroom: Gauge = new Gauge({
    name: 'relay_memory_headroom_bytes',
    help: "relay_memory_limit_bytes less the memory in use now: the cgroup's working set (memory.current less inactive file cache) when the limit is the container's, else this process's RSS",
    registers: [this.registry],
    collect: (): void => this.memoryHeadroom.set(this.memory?.headroom() ?? machineLimit() - process.memoryUsage.rss()),
  });
  readonly quotaExceeded = new TalliedCounter({
    name: 'relay_quota_exceeded_total',
    help: "Writes refused QUOTA_EXCEEDED by a bot's storage quota, by what refused them: streams (BOT_MAX_OPEN_STREAMS) or bytes (its open streams hold BOT_STORAGE_MAX_BYTES); see docs/operations.md, storage quotas per bot",
    labelNames: ['limit'] as const,
    registers: [this.registry],
  });

  readonly rateLimited = new TalliedCounter({
    name: 'relay_rate_limited_total',
    help: "Refusals for a spent budget, by scope: socket (one socket's events), user (a sub's messages to a bot over every socket and replica, or its feedback and stops), agent_delivery (a bot's deliveries on this replica), agent_runtimes (a runtime past MAX_RUNTIMES_PER_AGENT)",
    labelNames: ['scope'] as const,
    registers: [this.registry],
  });

  /** What {@link historyMemoryBytes} reads on each scrape; none with Redis. */
  private historyMemory: (() => number) | null = null;

  readonly historyMemoryBytes: Gauge = new Gauge({
    name: 'relay_history_memory_bytes',
    help: 'Bytes held by the embedded (in-memory) conversation log, bounded by HISTORY_MEMORY_MAX_BYTES (0 with Redis)',
    registers: [this.registry],
    collect: (): void => this.historyMemoryBytes.set(this.historyMemory?.() ?? 0),
  });

  /** Makes {@link memoryLimit} and {@link memoryHeadroom} report `memory`'s. */
  watchMemory(memory: MemoryGauges): void {
    this.memory = memory;
  }

  /** Makes {@link historyMemoryBytes} report `read()`. */
  watchHistoryMemory(read: () => number): void {
    this.historyMemory = read;
  }

  constructor() {
    this.registry.setDefaultLabels({});
    collectDefaultMetrics({ register: this.registry, eventLoopMonitoringPrecision: 20 });
  }

  /** Reports `checks` (the ones /health/ready answers from) as relay_ready and relay_readiness_check. */
  readFrom(checks: ReadinessChecks): void {
    this.readinessChecks = checks;
  }
}
