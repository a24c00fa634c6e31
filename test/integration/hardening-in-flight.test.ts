import { Events, type SendAck } from '../../src/protocol';
import { agentSocket, connected, startHub, type TestHub } from '../helpers/hub';
import { TEST_AGENT_KEY } from '../helpers/tokens';

const IN_FLIGHT = 50;

let t: TestHub;
beforeAll(async () => {
  // No restart grace: deliveries must end the moment the runtime leaves, not after AGENT_ACK_TIMEOUT_MS
  // (agent-grace.test.ts covers waiting for a returning runtime).
  t = await startHub({ MESSAGE_RATE_PER_S: '0', AGENT_RECONNECT_GRACE_MS: '0' });
});
afterAll(() => t.close());

describe('many deliveries in flight to one runtime', () => {
  it('share one disconnect listener, and all fail over at once when the runtime leaves', async () => {
    const warnings: Error[] = [];
    const onWarning = (w: Error) => warnings.push(w);
    process.on('warning', onWarning);
    try {
      // A runtime that receives but never acks, so every delivery stays in flight.
      const runtime = agentSocket(t.url, { apiKey: TEST_AGENT_KEY, agentId: 'slow-bot' });
      let received = 0;
      const allReceived = new Promise<void>((resolve) =>
        runtime.on(Events.message, () => {
          if (++received === IN_FLIGHT) resolve();
        }),
      );
      await connected(runtime);
      const client = await t.client('slow-bot', { sub: 'waiting' });

      const acks: Promise<SendAck>[] = Array.from({ length: IN_FLIGHT }, (_, i) =>
        client.timeout(10_000).emitWithAck(Events.message, { clientMessageId: `w${i}`, text: 'wait' }),
      );
      await allReceived;
      const hubSide = [...t.hub.relay.namespaces.agent.sockets.values()].find((s) => s.data.agentId === 'slow-bot')!;
      expect(hubSide.listenerCount('disconnect')).toBeLessThanOrEqual(3);

      runtime.disconnect();
      const results = await Promise.all(acks);
      expect(new Set(results.map((r) => (r.ok ? 'ok' : r.error.code)))).toEqual(new Set(['AGENT_OFFLINE']));
      expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
      client.disconnect();
    } finally {
      process.off('warning', onWarning);
    }
  });
});
