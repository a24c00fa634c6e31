import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';

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
    help: 'Connections refused before the Socket.IO handshake, by reason',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });

  readonly messages = new Counter({
    name: 'relay_messages_total',
    help: 'Relayed messages by direction (client_to_agent, agent_to_client, debug)',
    labelNames: ['direction'] as const,
    registers: [this.registry],
  });

  readonly acks = new Counter({
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

  readonly dropped = new Counter({
    name: 'relay_dropped_events_total',
    help: 'Inbound events dropped without an ack (no ack callback given), by reason',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });

  readonly logAppends = new Counter({
    name: 'relay_log_appends_total',
    help: 'Conversation log appends by author (user, agent) and result (ok, error); an error means the sender got SERVER_UNAVAILABLE',
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

  constructor() {
    this.registry.setDefaultLabels({});
    collectDefaultMetrics({ register: this.registry, eventLoopMonitoringPrecision: 20 });
  }
}
