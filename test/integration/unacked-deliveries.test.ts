import { io as connect, type Socket } from 'socket.io-client';
import type { Socket as ServerSocket } from 'socket.io';
import { Namespaces, type SendAck } from '../../src/protocol';
import { connected, startHub, type TestHub } from '../helpers/hub';
import { TEST_AGENT_KEY } from '../helpers/tokens';
import { exposedGc } from '../helpers/gc';

const MESSAGES = 10_000;
const WAVE = 500;
const ACK_TIMEOUT_MS = 100;

/** Heap and RSS after a full garbage collection, so what is measured is what is retained. */
function retained(): { heap: number; rss: number } {
  exposedGc()();
  const { heapUsed, rss } = process.memoryUsage();
  return { heap: heapUsed, rss };
}

/** The server socket's table of acks it still waits for: a Socket.IO internal, checked to exist. */
function pendingAcks(socket: ServerSocket): number {
  const acks = (socket as unknown as { acks?: unknown }).acks;
  // If Socket.IO renames or restructures this field, this test must fail rather than pass vacuously.
  expect(acks).toBeInstanceOf(Map);
  return (acks as Map<number, unknown>).size;
}

/**
 * Issue 10: `socket.emit(message, ack)` without `.timeout()` keeps every unacknowledged delivery
 * on the runtime's socket for as long as the runtime stays connected.
 */
describe('a runtime that never acks', () => {
  let t: TestHub;
  let runtime: Socket;
  let client: Socket;
  beforeAll(async () => {
    t = await startHub({ AGENT_ACK_TIMEOUT_MS: String(ACK_TIMEOUT_MS), MESSAGE_RATE_PER_S: '0', USER_MESSAGE_RATE_PER_S: '0' });
    runtime = connect(`${t.url}${Namespaces.agent}`, {
      transports: ['websocket'],
      forceNew: true,
      reconnection: false,
      auth: { apiKey: TEST_AGENT_KEY, agentId: 'silent' },
    });
    await connected(runtime);
    client = await t.client('silent', { sub: 'chatty' });
  });
  afterAll(async () => {
    runtime?.disconnect();
    await t?.close();
  });

  it(`holds a bounded number of pending acks and flat RSS over ${MESSAGES} unacked deliveries`, async () => {
    let received = 0;
    runtime.on('message', () => received++); // never calls the ack
    const [server] = t.hub.relay.namespaces.agent.sockets.values();
    const samples: number[] = [];
    const memory: { heap: number; rss: number }[] = [];
    for (let sent = 0; sent < MESSAGES; sent += WAVE) {
      const wave = Array.from({ length: WAVE }, (_, i) =>
        client.timeout(10_000).emitWithAck('message', { clientMessageId: `m${sent + i}`, text: 'x'.repeat(256) }),
      );
      samples.push(pendingAcks(server));
      const acks = (await Promise.all(wave)) as SendAck[];
      expect(acks.every((a) => !a.ok && a.error.code === 'TIMEOUT')).toBe(true);
      if (sent === MESSAGES / 2) memory.push(retained());
    }
    memory.push(retained());
    expect(received).toBe(MESSAGES);
    // At most one wave in flight at any time, and nothing left once the timeouts fired.
    expect(Math.max(...samples)).toBeLessThanOrEqual(WAVE);
    expect(pendingAcks(server)).toBe(0);
    // The second half of the run (5,000 more deliveries) adds no retained memory worth the name;
    // what it does retain is mostly the dedupe records, kept DEDUPE_WINDOW_S by design.
    // Heap is the exact signal; RSS (allocator pages are not always returned) gets a looser bound.
    const [middle, end] = memory as [{ heap: number; rss: number }, { heap: number; rss: number }];
    expect(end.heap - middle.heap).toBeLessThan(4 * 1024 * 1024);
    expect(end.rss - middle.rss).toBeLessThan(48 * 1024 * 1024);
  });
});
