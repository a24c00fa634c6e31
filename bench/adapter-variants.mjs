// The alternatives bench/adapter-fanout.mjs measures against what the hub runs, installed through
// the hub's cluster hooks (`createHub(config, { cluster: { adapter, dispatcher } })`) so that their
// code lives here and not in src/.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { createAdapter } = require('@socket.io/redis-adapter');
const { LocalDispatcher } = require('../dist/relay/dispatcher.js');
const { Events } = require('../dist/protocol/index.js');

/** The PUBLISH/PSUBSCRIBE adapter, where every replica receives every broadcast. */
export function classicAdapter(io, pub, sub, channelPrefix) {
  io.adapter(createAdapter(pub, sub, { key: channelPrefix }));
}

/**
 * Socket.IO's own broadcast-with-ack to the runtime's socket id through the adapter. Every replica
 * receives the request and answers with a client count, so its cost grows with the number of
 * replicas.
 */
export class AdapterAckDispatcher {
  constructor(replicaId, agents, deliveries) {
    this.replicaId = replicaId;
    this.agents = agents;
    this.local = new LocalDispatcher(agents, deliveries);
  }

  async deliver(target, message, timeoutMs) {
    if (target.replicaId === this.replicaId) return this.local.deliver(target, message, timeoutMs);
    try {
      const acks = await this.agents.to(target.socketId).timeout(timeoutMs).emitWithAck(Events.message, message);
      return acks.length > 0 ? 'acked' : 'gone';
    } catch {
      return 'timeout';
    }
  }

  prepare() {
    return null;
  }

  async close() {}
}

/** The `cluster` option of `createHub` for an adapter (`sharded`, `classic`) and dispatch (`direct`, `adapter-ack`). */
export function clusterVariant({ adapter, dispatch }) {
  return {
    ...(adapter === 'classic' ? { adapter: classicAdapter } : {}),
    ...(dispatch === 'adapter-ack'
      ? { dispatcher: (replicaId, agents, deliveries) => new AdapterAckDispatcher(replicaId, agents, deliveries) }
      : {}),
  };
}
