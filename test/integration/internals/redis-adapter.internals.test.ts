import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import Redis from 'ioredis';
import { Server, type Namespace } from 'socket.io';
import { io as connect, type Socket } from 'socket.io-client';
import {
  adapterChannels,
  roomBroadcastFramer,
  roomChannelNamer,
  shardedAdapter,
  type PublishFailure,
} from '../../../src/internals/redis-adapter.internals';
import { namespacesOf } from '../../../src/internals/socket-io.internals';
import { fill } from '../../../src/store/json-frames';
import { startRedis, type TestRedis } from '../../helpers/redis-server';

// src/internals/redis-adapter.internals.ts spells the sharded Redis adapter's broadcast frame by
// hand (the conversation log publishes it with its append) and reads the adapter's channels. The
// frame must be, byte for byte, what the adapter itself publishes for the same broadcast but for its
// sender (no replica's, so that every replica's adapter delivers it), and an adapter, the
// publishing one's included, must deliver it to its sockets in the room.
const NSP = '/ws/client';
const ROOM = 'client#bot#user-1';

interface Replica {
  io: Server;
  nsp: Namespace;
  url: string;
  pub: Redis;
  sub: Redis;
  close(): Promise<void>;
}

describe('@socket.io/redis-adapter internals', () => {
  let redis: TestRedis;
  const replicas: Replica[] = [];
  const clients: Socket[] = [];

  async function replica(onFailure: PublishFailure = () => {}, pubOptions: object = {}): Promise<Replica> {
    // No reconnects: a closed replica's subscriber would otherwise reconnect, run its ready check in
    // subscriber mode and fail a later test with "Connection in subscriber mode".
    const pub = new Redis(redis.url, { retryStrategy: () => null, ...pubOptions });
    const sub = new Redis(redis.url, { retryStrategy: () => null });
    pub.on('error', () => {});
    sub.on('error', () => {});
    // The adapter subscribes at once: a subscriber still connecting would run its ready check
    // (INFO) in subscriber mode and fail with "Connection in subscriber mode". The hub waits for
    // its connections to be ready first too (whenReady in src/cluster/redis-connections.ts).
    if (sub.status !== 'ready') await new Promise((resolve) => sub.once('ready', resolve));
    const httpServer = createServer();
    const io = new Server(httpServer, { transports: ['websocket'] });
    io.adapter(shardedAdapter(pub, sub, 'test-sio', onFailure));
    const nsp = io.of(NSP);
    nsp.on('connection', (socket) => void socket.join(ROOM));
    await new Promise<void>((resolve) => httpServer.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(httpServer.address() as AddressInfo).port}${NSP}`;
    const r: Replica = {
      io,
      nsp,
      url,
      pub,
      sub,
      close: async () => {
        await new Promise((resolve) => io.close(resolve));
        // QUIT answers after the adapters' SUNSUBSCRIBEs: nothing is left pending on a closed connection.
        await Promise.all([pub, sub].map((client) => client.quit().catch(() => client.disconnect())));
      },
    };
    replicas.push(r);
    return r;
  }

  /** SPUBLISH on a connection of its own, as the store's script does; the adapter's may be in subscriber mode. */
  async function publish(channel: string, message: string): Promise<void> {
    const publisher = new Redis(redis.url);
    try {
      await publisher.spublish(channel, message);
    } finally {
      publisher.disconnect();
    }
  }

  /** A client in ROOM on `r`, once the replica's subscription to the room's channel took effect. */
  async function member(r: Replica): Promise<Socket> {
    const client = connect(r.url, { transports: ['websocket'], forceNew: true, reconnection: false });
    clients.push(client);
    await new Promise<void>((resolve) => client.once('connect', () => resolve()));
    await r.sub.ping();
    return client;
  }

  beforeAll(async () => {
    redis = await startRedis();
  });

  // Replicas first: closing a client first would make its replica unsubscribe from the room's
  // channel at some later moment, perhaps on a connection already closed.
  afterEach(async () => {
    for (const r of replicas.splice(0)) await r.close();
    for (const client of clients.splice(0)) client.close();
  });

  afterAll(async () => {
    await redis.close();
  });

  it('the hand-written broadcast frame is what the adapter publishes, on the same channel', async () => {
    const a = await replica();
    await member(a);
    const channel = roomChannelNamer(a.nsp)?.(ROOM);
    expect(channel).toBe(`test-sio#${NSP}#${ROOM}#`);
    const listener = new Redis(redis.url);
    try {
      await listener.ssubscribe(channel as string);
      const published = new Promise<[string, string]>((resolve) =>
        listener.once('smessage', (ch: string, msg: string) => resolve([ch, msg])),
      );
      const data = { id: 'm"1', text: 'héllo \u2028 "quoted"', nested: [1, { x: null }] };
      a.nsp.to(ROOM).emit('message', data);
      const frame = roomBroadcastFramer(a.nsp)?.(ROOM, 'message');
      expect(frame).not.toBeNull();
      const [ch, raw] = await published;
      expect(ch).toBe(frame?.channel);
      const uid = (a.nsp.adapter as unknown as { uid: string }).uid;
      expect(raw).toContain(`"uid":${JSON.stringify(uid)}`);
      const expected = fill(frame as NonNullable<typeof frame>, JSON.stringify(data));
      expect(expected).not.toContain(uid);
      expect(raw).toBe(expected.replace(/"uid":"[^"]*"/, `"uid":${JSON.stringify(uid)}`));
    } finally {
      await listener.quit();
    }
  });

  it("another replica's adapter delivers the hand-written frame to its sockets in the room", async () => {
    const a = await replica();
    const b = await replica();
    const client = await member(b);
    const frame = roomBroadcastFramer(a.nsp)?.(ROOM, 'message');
    const arrived = new Promise((resolve) => client.once('message', resolve));
    await publish(frame?.channel as string, fill(frame as NonNullable<typeof frame>, JSON.stringify({ id: 'x', text: 'hi' })));
    expect(await arrived).toEqual({ id: 'x', text: 'hi' });
  });

  it("the publishing replica's own adapter delivers the frame to its sockets in the room too", async () => {
    const a = await replica();
    const client = await member(a);
    const frame = roomBroadcastFramer(a.nsp)?.(ROOM, 'message');
    const arrived = new Promise((resolve) => client.once('message', resolve));
    await publish(frame?.channel as string, fill(frame as NonNullable<typeof frame>, JSON.stringify({ id: 'y', text: 'own' })));
    expect(await arrived).toEqual({ id: 'y', text: 'own' });
  });

  it('lists the channels the adapters subscribe to: their own two and one per public room', async () => {
    const a = await replica();
    await member(a);
    // Asked on a connection of its own: the adapter's may be in subscriber mode.
    const admin = new Redis(redis.url);
    const subscribed = ((await admin.call('PUBSUB', 'SHARDCHANNELS', 'test-sio#*')) as string[]).sort();
    admin.disconnect();
    const listed = adapterChannels(namespacesOf(a.io)).sort();
    expect(listed).toEqual(expect.arrayContaining([`test-sio#${NSP}#${ROOM}#`, `test-sio#${NSP}#`]));
    expect(listed).toEqual(subscribed);
  });

  it('tells of a broadcast the adapter failed to publish', async () => {
    let failed!: (what: string) => void;
    const failure = new Promise<string>((resolve) => (failed = resolve));
    // A publisher that never connects and queues nothing: every publish fails at once.
    const a = await replica((_err, what) => failed(what), { enableOfflineQueue: false, lazyConnect: true });
    a.nsp.to(ROOM).emit('message', { id: 'lost' });
    expect(await failure).toBe('broadcast');
  });
});
