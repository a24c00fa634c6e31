import { createServer } from 'node:http';
import { connect as tcpConnect, type AddressInfo, type Socket as NetSocket } from 'node:net';
import { Server, type Socket as ServerSocket } from 'socket.io';
import { io as connect, type Socket } from 'socket.io-client';
import WebSocket from 'ws';
import { turnHold } from '../../src/net/cork-per-turn';
import { BatchingWebSocketServer } from '../../src/net/websocket-engine';
import type { ClientInboundMessage, SessionInfo } from '../../src/protocol';
import { clientSocket, connected, startHub } from '../helpers/hub';
import { countWrites } from '../helpers/socket-writes';
import { mintToken } from '../helpers/tokens';

// The hub's WebSocket engine (net/websocket-engine.ts) writes what a connection sends within one
// turn of the event loop in one system call, in order; a connection that closes or vanishes with
// frames queued costs nothing else; in a turn that runs long, what it held goes out once the oldest
// of it has waited turnHold.maxMs. Counted at the server's socket, under a real Socket.IO server and
// in the hub (a recovery replay). The tests that count one write per turn lengthen the hold, so that
// a loaded machine cannot split their turns.

/** Runs the block's tests with turns held whole, however long they run. */
function holdingWholeTurns(): void {
  const usual = turnHold.maxMs;
  beforeAll(() => {
    turnHold.maxMs = Number.POSITIVE_INFINITY;
  });
  afterAll(() => {
    turnHold.maxMs = usual;
  });
}

/** Keeps the CPU busy for `ms` (a long turn, as a burst of events makes one). */
function busy(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

interface Served {
  io: Server;
  url: string;
  /** The server's side of the next websocket upgrade, its writes counted from the upgrade on. */
  nextUpgrade(): Promise<{ socket: NetSocket; writes: { readonly count: number } }>;
  close(): Promise<void>;
}

/**
 * A Socket.IO server on port 0 whose sockets answer `burst` with n `item` events, then the ack;
 * `broadcast` the same, with the items sent to a room the socket is in (Socket.IO writes a
 * broadcast's frame, encoded once for the room, by another path than a socket's own emits).
 */
async function serve(wsEngine?: typeof BatchingWebSocketServer): Promise<Served> {
  const httpServer = createServer();
  const io = new Server(httpServer, { transports: ['websocket'], ...(wsEngine ? { wsEngine } : {}) });
  io.on('connection', (socket: ServerSocket) => {
    void socket.join('room');
    socket.on('burst', (n: number, ack: (reply: string) => void) => {
      for (let i = 0; i < n; i++) socket.emit('item', i);
      ack('done');
    });
    socket.on('broadcast', (n: number, ack: (reply: string) => void) => {
      for (let i = 0; i < n; i++) io.to('room').emit('item', i);
      ack('done');
    });
  });
  await new Promise<void>((resolve) => httpServer.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(httpServer.address() as AddressInfo).port}`;
  return {
    io,
    url,
    nextUpgrade: () =>
      new Promise((resolve) =>
        httpServer.prependOnceListener('upgrade', (_req, socket: NetSocket) => resolve({ socket, writes: countWrites(socket) })),
      ),
    close: () => new Promise((resolve) => io.close(() => resolve())),
  };
}

function client(url: string): Socket {
  return connect(url, { transports: ['websocket'], forceNew: true, reconnection: false });
}

/** Sends `burst` (or `broadcast`) and resolves with the items received and the ack, in arrival order. */
async function burst(socket: Socket, n: number, event = 'burst'): Promise<unknown[]> {
  const arrived: unknown[] = [];
  const onItem = (i: number) => arrived.push(i);
  socket.on('item', onItem);
  arrived.push(await socket.timeout(5000).emitWithAck(event, n));
  socket.off('item', onItem);
  return arrived;
}

const inOrder = (n: number) => [...Array.from({ length: n }, (_, i) => i), 'done'];

describe('under a Socket.IO server', () => {
  holdingWholeTurns();
  let batching: Served;
  let plain: Served;
  const sockets: Socket[] = [];

  beforeAll(async () => {
    batching = await serve(BatchingWebSocketServer);
    plain = await serve();
  });

  afterEach(() => {
    for (const s of sockets.splice(0)) s.disconnect();
  });

  afterAll(async () => {
    await batching.close();
    await plain.close();
  });

  async function open(served: Served) {
    const upgrade = served.nextUpgrade();
    const joined = new Promise<ServerSocket>((resolve) => served.io.once('connection', resolve));
    const socket = client(served.url);
    sockets.push(socket);
    await connected(socket);
    const { socket: raw, writes } = await upgrade;
    return { socket, raw, writes, serverSide: await joined };
  }

  it('sends the 51 frames a handler emits in one turn in one write, in order', async () => {
    const { socket, writes } = await open(batching);
    const before = writes.count;
    expect(await burst(socket, 50)).toEqual(inOrder(50));
    expect(writes.count - before).toBe(1);
  });

  it("sends a turn's broadcasts to the socket's room and its ack in one write, in order", async () => {
    const { socket, writes } = await open(batching);
    const before = writes.count;
    expect(await burst(socket, 20, 'broadcast')).toEqual(inOrder(20));
    expect(writes.count - before).toBe(1);
  });

  it('(the stock engine writes each frame on its own)', async () => {
    const { socket, writes } = await open(plain);
    const before = writes.count;
    expect(await burst(socket, 50)).toEqual(inOrder(50));
    expect(writes.count - before).toBeGreaterThan(25);
  });

  it('keeps a long run of turns in order, one write per turn', async () => {
    const { socket, writes } = await open(batching);
    const before = writes.count;
    for (let round = 0; round < 20; round++) expect(await burst(socket, 10)).toEqual(inOrder(10));
    expect(writes.count - before).toBe(20);
  });

  it('delivers the frames queued before a disconnect in the same turn, then the disconnect', async () => {
    const { socket, serverSide } = await open(batching);
    const arrived: number[] = [];
    socket.on('item', (i: number) => arrived.push(i));
    const reason = new Promise<string>((resolve) => socket.once('disconnect', resolve));
    for (let i = 0; i < 30; i++) serverSide.emit('item', i);
    serverSide.disconnect(true);
    expect(await reason).toBe('io server disconnect');
    expect(arrived).toEqual(Array.from({ length: 30 }, (_, i) => i));
  });

  it('drops what was queued for a socket destroyed in the same turn, and serves the next client', async () => {
    const { raw, serverSide } = await open(batching);
    const gone = new Promise<string>((resolve) => serverSide.once('disconnect', resolve));
    for (let i = 0; i < 30; i++) serverSide.emit('item', i);
    raw.destroy();
    expect(await gone).toMatch(/^transport (close|error)$/);

    const { socket } = await open(batching);
    expect(await burst(socket, 5)).toEqual(inOrder(5));
  });

  it('survives a peer that vanished before the frames sent to it', async () => {
    const upgrade = batching.nextUpgrade();
    const bare = new WebSocket(`${batching.url.replace('http', 'ws')}/socket.io/?EIO=4&transport=websocket`);
    bare.on('error', () => {});
    bare.once('message', () => bare.send('40'));
    const joined = new Promise<ServerSocket>((resolve) => batching.io.once('connection', resolve));
    await upgrade;
    const serverSide = await joined;
    const gone = new Promise<string>((resolve) => serverSide.once('disconnect', resolve));
    bare.terminate();
    for (let i = 0; i < 1000; i++) serverSide.emit('item', 'x'.repeat(1000));
    expect(await gone).toMatch(/^transport (close|error)$/);

    const { socket } = await open(batching);
    expect(await burst(socket, 5)).toEqual(inOrder(5));
  });
  it('answers an upgrade that ws refuses, corked as it is, with its HTTP error', async () => {
    const { port } = new URL(batching.url);
    const tcp = tcpConnect(Number(port), '127.0.0.1');
    let response = '';
    tcp.on('data', (chunk: Buffer) => (response += chunk.toString()));
    const ended = new Promise<void>((resolve) => tcp.on('close', () => resolve()));
    tcp.write(
      'GET /socket.io/?EIO=4&transport=websocket HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n' +
        'Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: not-a-key\r\n\r\n',
    );
    await ended;
    expect(response).toMatch(/^HTTP\/1\.1 400 /);
    expect(response).toContain('Sec-WebSocket-Key');
  });
});

describe('in a turn that runs long', () => {
  let batching: Served;
  const sockets: Socket[] = [];
  const usual = turnHold.maxMs;
  beforeAll(async () => {
    batching = await serve(BatchingWebSocketServer);
    turnHold.maxMs = 2;
  });
  afterAll(async () => {
    turnHold.maxMs = usual;
    for (const s of sockets.splice(0)) s.disconnect();
    await batching.close();
  });

  it('writes out what every socket held once the oldest of it has waited the hold', async () => {
    const peers: { socket: Socket; raw: NetSocket; serverSide: ServerSocket }[] = [];
    for (let i = 0; i < 3; i++) {
      const upgrade = batching.nextUpgrade();
      const joined = new Promise<ServerSocket>((resolve) => batching.io.once('connection', resolve));
      const socket = client(batching.url);
      sockets.push(socket);
      await connected(socket);
      peers.push({ socket, raw: (await upgrade).socket, serverSide: await joined });
    }
    // Writes to the kernel made while the handler below still runs.
    let running = false;
    let early = 0;
    for (const { raw } of peers) {
      for (const method of ['_write', '_writev'] as const) {
        const original = raw[method] as (...args: unknown[]) => void;
        raw[method] = function (this: NetSocket, ...args: unknown[]) {
          if (running) early++;
          return original.apply(this, args);
        } as never;
      }
    }
    // One frame to each socket, 3 ms apart, in one turn (as a burst of relayed messages to
    // different clients makes one): the second finds the first held past 2 ms, and both go out then.
    peers[0].serverSide.on('spread', (ack: (reply: string) => void) => {
      running = true;
      for (const { serverSide } of peers) {
        serverSide.emit('item', 0);
        busy(3);
      }
      running = false;
      ack('done');
    });
    const arrived = peers.map(({ socket }) => new Promise((resolve) => socket.once('item', resolve)));
    expect(await peers[0].socket.timeout(5000).emitWithAck('spread')).toBe('done');
    expect(await Promise.all(arrived)).toEqual([0, 0, 0]);
    expect(early).toBeGreaterThanOrEqual(2);
  });
});

describe('in the hub', () => {
  holdingWholeTurns();
  it('replays what a reconnecting client missed, and its session, in a few writes', async () => {
    const t = await startHub({ RECOVERY_MAX_MESSAGES: '20' });
    try {
      const agent = await t.agent('wb-a');
      const first = await t.client('wb-a', { sub: 'wb-u' });
      const seen = await agent.reply('wb-u', 'seen');
      first.disconnect();
      const missed = [];
      for (let i = 0; i < 20; i++) missed.push((await agent.reply('wb-u', `m${i}`)).id);

      const upgrade = new Promise<{ readonly count: number }>((resolve) =>
        t.hub.httpServer.prependOnceListener('upgrade', (_req, socket: NetSocket) => resolve(countWrites(socket))),
      );
      const back = clientSocket(t.url, { token: mintToken({ sub: 'wb-u' }), agentId: 'wb-a', lastMessageId: seen.id });
      const replayed: string[] = [];
      back.on('message', (m: ClientInboundMessage) => replayed.push(m.id));
      const session = new Promise<SessionInfo>((resolve) => back.once('session', resolve));
      await connected(back);
      expect(await session).toMatchObject({ recovered: true });
      expect(replayed).toEqual(missed);
      // The upgrade's response with the engine's open packet, the namespace's connect, then the
      // 20 messages and `session` of one turn: 22 writes or more when each frame has its own.
      expect((await upgrade).count).toBeLessThanOrEqual(4);
      back.disconnect();
    } finally {
      await t.close();
    }
  });
});
