import type { HubConfig } from '../config/config';
import type { HubMetrics } from '../metrics/metrics';
import { LocalDispatcher } from '../relay/dispatcher';
import { quotaOf } from '../store/bot-quota';
import { MemoryStore } from '../store/memory/memory.store';
import { RoomFrames } from './frames';
import type { Infrastructure } from './infrastructure';

/**
 * The embedded single replica: shared state in memory, every runtime local. Nothing crosses
 * replicas: the frames are never given a namespace, so every one is null and the relay emits as
 * usual.
 */
export function createMemoryInfrastructure(config: HubConfig, metrics: HubMetrics): Infrastructure {
  const store = new MemoryStore({
    limits: { maxMessages: config.HISTORY_MAX_MESSAGES, ttlS: config.HISTORY_TTL_S },
    quota: quotaOf(config),
    bounds: {
      maxConversations: config.HISTORY_MEMORY_MAX_CONVERSATIONS,
      maxMessages: config.HISTORY_MEMORY_MAX_MESSAGES,
      maxBytes: config.HISTORY_MEMORY_MAX_BYTES,
    },
  });
  metrics.watchHistoryMemory(() => store.log.byteSize);
  return {
    store,
    replicaId: 'local',
    clustered: false,
    attach: () => {},
    roomChannel: () => null,
    frames: new RoomFrames(),
    bind: (namespaces, deliveries) => new LocalDispatcher(namespaces.agent, deliveries),
    start: () => {},
    stop: () => {},
    subscriptionsSettled: async () => {},
    subscriptions: { intact: () => true, onGap: () => {} },
    readinessChecks: async () => ({}),
    close: () => store.close(),
  };
}
