import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server, type Socket as ServerSocket } from 'socket.io';
import { io as connect, type Socket } from 'socket.io-client';
import {
  deliveryStandIn,
  interceptBroadcasts,
  writeEncoded,
  type BroadcastPacket,
  type EncodedWrite,
} from '../../../src/internals/socket-io-adapter.internals';

// src/internals/socket-io-adapter.internals.ts relies on how the adapter hands a broadcast to each
// socket: through `apply(opts, deliver)`, with `deliver(socket)` calling the socket's
// `notifyOutgoingListeners(packet)` and then `socket.client.writeToEngine(encoded, options)`. A
// stand-in given to `deliver` must see the packet and catch the write (nothing reaches the client),
// and the caught write, written later, must arrive as the broadcast would have.
describe('socket.io-adapter internals', () => {
  let io: Server;
  let client: Socket;
  let serverSocket: ServerSocket;

  beforeEach(async () => {
    const httpServer = createServer();
    io = new Server(httpServer, { transports: ['websocket'] });
    const joined = new Promise<ServerSocket>((resolve) =>
      io.on('connection', (socket) => {
        void socket.join('room');
        resolve(socket);
      }),
    );
    await new Promise<void>((resolve) => httpServer.listen(0, '127.0.0.1', resolve));
    client = connect(`http://127.0.0.1:${(httpServer.address() as AddressInfo).port}`, {
      transports: ['websocket'],
      forceNew: true,
      reconnection: false,
    });
    serverSocket = await joined;
  });

  afterEach(async () => {
    client.close();
    await new Promise((resolve) => io.close(resolve));
  });

  it('a broadcast reaches each socket through Adapter#apply, and a stand-in sees its packet and holds its write', async () => {
    const held: { packet: BroadcastPacket | undefined; write: EncodedWrite }[] = [];
    const seenBy: string[] = [];
    interceptBroadcasts(
      io.of('/'),
      (apply) => (opts, deliver) =>
        apply(opts, (socket) => {
          seenBy.push(socket.id);
          deliver(deliveryStandIn(socket, (packet, write) => held.push({ packet, write })));
        }),
    );
    const events: unknown[][] = [];
    client.onAny((...args: unknown[]) => events.push(args));
    const marker = new Promise((resolve) => client.once('marker', resolve));

    io.to('room').emit('broadcast', { n: 1 });
    // A socket's own emit is not a broadcast: it is not held, and it arrives after anything written before it.
    serverSocket.emit('marker');
    await marker;

    expect(seenBy).toEqual([serverSocket.id]);
    expect(held.map((h) => h.packet?.data)).toEqual([['broadcast', { n: 1 }]]);
    expect(events).toEqual([['marker']]);

    const arrived = new Promise((resolve) => client.once('broadcast', resolve));
    writeEncoded(serverSocket, held[0].write);
    expect(await arrived).toEqual({ n: 1 });
  });

  it('without a stand-in, deliver writes to the socket as before', async () => {
    interceptBroadcasts(io.of('/'), (apply) => (opts, deliver) => apply(opts, deliver));
    const arrived = new Promise((resolve) => client.once('broadcast', resolve));
    io.to('room').emit('broadcast', 'plain');
    expect(await arrived).toBe('plain');
  });
});
