import { ServerResponse, type IncomingMessage } from 'node:http';
import type { Socket as ClientSocket } from 'socket.io-client';
import { Namespaces } from '../../src/protocol';
import { startHub, type TestHub } from '../helpers/hub';
import { collectGarbage } from '../helpers/gc';
import { sleep } from '../helpers/wait';

// What an idle client costs the hub is mostly what it keeps per connection. These pin down the
// things it deliberately does not keep (bench/relay-phases.mjs measures the memory itself).
const ORIGIN = 'https://good.example';

let t: TestHub;
/** The stand-in responses engine.io hands middlewares on websocket upgrades, in arrival order. */
const upgradeResponses: { req: IncomingMessage | null }[] = [];
/** The same, held weakly. */
const upgradeResponseRefs: WeakRef<object>[] = [];
/** Every HTTP request engine.io's middlewares saw, held weakly: the test must not keep them. */
const requests: WeakRef<IncomingMessage>[] = [];
beforeAll(async () => {
  t = await startHub({ CORS_ORIGINS: ORIGIN, TRUST_PROXY: 'true' });
  // Runs after the hub's own engine middleware, on the same response objects.
  t.hub.io.engine.use((_req: IncomingMessage, res: ServerResponse | { req: IncomingMessage | null }, next: () => void) => {
    if (!(res instanceof ServerResponse)) {
      upgradeResponses.push(res);
      upgradeResponseRefs.push(new WeakRef(res));
    }
    requests.push(new WeakRef(_req));
    next();
  });
});
afterAll(() => t.close());
beforeEach(() => {
  upgradeResponses.length = 0;
  upgradeResponseRefs.length = 0;
  requests.length = 0;
});

const serverSocket = (client: ClientSocket) => t.hub.io.of(Namespaces.client).sockets.get(client.id!)!;

it.each([
  ['websocket', ['websocket']],
  ['polling upgraded to websocket', ['polling', 'websocket']],
] as const)('keeps neither HTTP request nor token of a %s connection, only the address and Origin', async (_name, transports) => {
  const client = await t.client(
    'bot',
    { sub: 'u' },
    { origin: ORIGIN, transports: [...transports], headers: { 'x-forwarded-for': '203.0.113.7' } },
  );
  const engine = client.io.engine;
  if (engine.transport.name !== 'websocket') await new Promise((resolve) => engine.once('upgrade', resolve));
  const socket = serverSocket(client);

  expect(socket.request).toBeNull();
  expect(t.hub.connections.of(socket)).toEqual({ ip: '203.0.113.7', origin: ORIGIN });
  expect(upgradeResponses).toHaveLength(1);
  expect(upgradeResponses[0].req).toBeNull();
  // Verified at the handshake, then dropped; what the session needs is in socket.data.
  expect((socket.handshake.auth as { token?: string }).token).toBeUndefined();
  expect(socket.data).toMatchObject({ clientId: 'u', sub: 'u', agentId: 'bot' });

  // The session still works: a message reaches the bot's runtime and is acked.
  const agent = await t.agent('bot');
  agent.onMessage(() => {});
  for (const runtime of t.hub.io.of(Namespaces.agent).sockets.values()) {
    expect((runtime.handshake.auth as { apiKey?: string }).apiKey).toBeUndefined();
  }
  const ack = await client.timeout(5000).emitWithAck('message', { clientMessageId: `m-${transports.length}`, text: 'hi' });
  expect(ack).toMatchObject({ ok: true });
  client.disconnect();
  agent.close();
});

it.each([
  ['websocket', ['websocket']],
  ['polling upgraded to websocket', ['polling', 'websocket']],
] as const)(
  'lets the HTTP requests of a connected %s client be collected (nothing of the upgrade outlives it)',
  async (_name, transports) => {
    const client = await t.client('bot', { sub: 'v' }, { origin: ORIGIN, transports: [...transports] });
    const engine = client.io.engine;
    if (engine.transport.name !== 'websocket') await new Promise((resolve) => engine.once('upgrade', resolve));
    // Polling requests answered: the connection holds only its websocket now.
    await sleep(50);
    expect(requests.length).toBeGreaterThan(0);

    upgradeResponses.length = 0;
    await collectGarbage();
    const alive = requests.filter((ref) => ref.deref() !== undefined).map((ref) => ref.deref()!.url);
    expect(alive).toEqual([]);
    // Nor Engine.IO's stand-in response of the upgrade, which a listener on the TCP socket kept.
    expect(upgradeResponseRefs.length).toBe(1);
    expect(upgradeResponseRefs[0].deref()).toBeUndefined();

    // And the connection still relays.
    const agent = await t.agent('bot');
    agent.onMessage(() => {});
    const ack = await client.timeout(5000).emitWithAck('message', { clientMessageId: `gc-${transports.length}`, text: 'hi' });
    expect(ack).toMatchObject({ ok: true });
    client.disconnect();
    agent.close();
  },
);

it('keeps none of the upgrade listeners on a websocket connection', async () => {
  const client = await t.client('bot', { sub: 'w' }, { origin: ORIGIN, transports: ['websocket'] });
  const transport = serverSocket(client).conn.transport as unknown as NodeJS.EventEmitter & { socket: NodeJS.EventEmitter };
  // Engine.IO's handshake listens for `headers`, which only its polling transport emits.
  expect(transport.listenerCount('headers')).toBe(0);
  // The `ws` connection's errors go to the transport alone, not also to the upgrade's no-op listener.
  expect(transport.socket.listeners('error').map((fn) => fn.name)).toEqual(['bound onError']);
  client.disconnect();
});

it('gives every client socket the same event listeners, not closures of its own', async () => {
  const [a, b] = [await t.client('bot', { sub: 'x1' }), await t.client('bot', { sub: 'x2' })].map(serverSocket);
  const events = a.eventNames() as string[];
  expect(events).toEqual(expect.arrayContaining(['message', 'auth:refresh', 'history', 'stop', 'feedback', 'disconnect']));
  expect(b.eventNames()).toEqual(events);
  for (const event of events) {
    const [ofA, ofB] = [a.listeners(event), b.listeners(event)];
    expect(ofA).toHaveLength(ofB.length);
    ofA.forEach((listener, i) => expect({ event, shared: listener === ofB[i] }).toEqual({ event, shared: true }));
  }
});

it('keeps no handshake objects of its own for a connected client socket', async () => {
  const [a, b] = [await t.client('bot', { sub: 'y1' }), await t.client('bot', { sub: 'y2' })].map(serverSocket);
  // The request was let go before Socket.IO built the handshake: its headers and query are empty.
  for (const field of ['headers', 'query'] as const) {
    expect({ field, value: a.handshake[field] }).toEqual({ field, value: {} });
    expect({ field, shared: a.handshake[field] === b.handshake[field] }).toEqual({ field, shared: true });
  }
});
