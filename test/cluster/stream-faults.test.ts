// Streamed replies when a replica's Redis commands fail mid-stream (docs/streaming.md, "Redis
// unreachable"), on two hub processes and one real Redis:
// - a delta whose append was lost with the connection (killed while Redis was paused) fails, and the
//   runtime's end after the reconnect is not acknowledged ok: the stream ends `error` with the text
//   Redis holds;
// - a delta whose append timed out (and ran later) makes the stream end `error`; the tabs are told the
//   end only once it is logged, with the logged text, and after what was logged before it, so a tab
//   resuming from the stream's id misses nothing;
// - a start that timed out (and ran late) leaves no stream open with nobody to end it.
// Redis is paused (CLIENT PAUSE WRITE) for less than the pub/sub canary's three missed probes, so no
// replica ends its client sessions for a subscription gap meanwhile.
import Redis from 'ioredis';
import type { Socket } from 'socket.io-client';
import type { ClientInboundMessage, HistoryAck, MessageEnd } from '../../src/protocol';
import { startTestCluster, type TestCluster } from '../helpers/cluster';
import { waitFor } from '../helpers/wait';
import { ack, streamPeers } from '../helpers/streams';

let cluster: TestCluster;
let R: string[];
let admin: Redis;
beforeAll(async () => {
  cluster = await startTestCluster({ STREAM_DELTA_RATE_PER_S: '5000', STREAM_DELTA_RATE_BURST: '5000' }, 2);
  R = cluster.handle.replicas.map((r) => r.url);
  admin = new Redis(cluster.handle.redis.url);
}, 60_000);
afterAll(async () => {
  admin?.disconnect();
  await cluster?.close();
}, 60_000);

const sockets: Socket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.disconnect();
  await admin.client('UNPAUSE');
});

type Ack = { ok: boolean; id?: string; ts?: string; seq?: number; error?: { code: string } };

const { runtime, tab } = streamPeers(() => cluster, sockets);

/** The message `id` as the log shows it (history, newest page). */
async function logged(socket: Socket, id: string): Promise<ClientInboundMessage | undefined> {
  const page = await ack<HistoryAck & { ok: true }>(socket, 'history', { limit: 100 });
  return page.messages.find((m) => m.id === id);
}

/** Waits until Redis holds a paused command of a hub's command connection (its writes wait there). */
async function pausedHubCommand(): Promise<string[]> {
  let addrs: string[] = [];
  await waitFor(
    async () => {
      const list = (await admin.client('LIST')) as string;
      addrs = list
        .split('\n')
        .filter((line) => / name=relay-hub:\S+:cmd /.test(line) && / flags=\S*b/.test(line))
        .map((line) => /addr=(\S+)/.exec(line)![1]);
      return addrs.length > 0;
    },
    2000,
    'a paused command of a hub',
  );
  return addrs;
}

it('does not ack ok the end of a stream whose delta was lost with its Redis connection: it ends error with the text Redis holds', async () => {
  const rt = (await runtime(R[0], 'f-lost')).socket;
  const watcher = await tab(R[1], 'f-lost', 'u1');
  const id = (await ack<Ack>(rt, 'stream:start', { to: 'u1' })).id!;
  expect(await ack<Ack>(rt, 'stream:delta', { id, text: 'one' })).toEqual({ ok: true, seq: 1 });
  await watcher.rec.wait('message:delta');
  expect(await admin.client('PAUSE', 5000, 'WRITE')).toBe('OK');
  // Fire and forget, as the agent SDK sends most deltas; their appends wait in the paused Redis.
  rt.emit('stream:delta', { id, text: ' two' });
  rt.emit('stream:delta', { id, text: ' three' });
  for (const addr of await pausedHubCommand()) await admin.client('KILL', addr);
  await admin.client('UNPAUSE');
  // The replica has its Redis again (a reply of the runtime logged), and then the runtime ends the stream.
  await waitFor(async () => (await ack<Ack>(rt, 'reply', { to: 'u1', text: 'back' })).ok, 10_000, 'the replica to serve again');
  const end = await ack<Ack>(rt, 'stream:end', { id });
  expect(end.ok).toBe(false);
  const told = await watcher.rec.wait<MessageEnd>('message:end', (e) => e.id === id);
  const final = await logged(watcher.socket, id);
  expect(final).toMatchObject({ id, text: 'one', status: 'error' });
  expect(told).toMatchObject({ id, text: final!.text, status: 'error' });
}, 30_000);

it('tells the tabs a stream ended error only once its end is logged: with the logged text, after what was logged before it', async () => {
  const rt = (await runtime(R[0], 'f-late')).socket;
  const observer = await tab(R[1], 'f-late', 'u1');
  // A tab on the replica that cannot reach Redis; it leaves as soon as it is told the stream ended.
  const near = await tab(R[0], 'f-late', 'u1');
  const id = (await ack<Ack>(rt, 'stream:start', { to: 'u1' })).id!;
  expect(await ack<Ack>(rt, 'stream:delta', { id, text: 'one' })).toEqual({ ok: true, seq: 1 });
  await near.rec.wait('message:delta');
  near.socket.on('message:end', () => near.socket.disconnect());
  // Shorter than three canary probes: no replica sees a subscription gap.
  expect(await admin.client('PAUSE', 2700, 'WRITE')).toBe('OK');
  // The append times out (2 s) but runs once Redis answers again: Redis ends up with more text than
  // the replica knew of.
  expect(await ack<Ack>(rt, 'stream:delta', { id, text: ' two' })).toMatchObject({ ok: false, error: { code: 'SERVER_UNAVAILABLE' } });
  // The runtime goes on with a reply, logged once Redis answers, before the stream's end.
  const reply = await ack<Ack>(rt, 'reply', { to: 'u1', text: 'after the failure' });
  expect(reply.ok).toBe(true);
  const told = await observer.rec.wait<MessageEnd>('message:end', (e) => e.id === id);
  // The tab on the failing replica, resuming from the end it was told (the stream's id, as the
  // embed SDK would), has everything: the reply too.
  const nearEnd = await near.rec.wait<MessageEnd>('message:end', (e) => e.id === id);
  const back = await tab(R[0], 'f-late', 'u1', id);
  expect(await back.rec.wait('session')).toMatchObject({ recovered: true });
  const shown = [...near.rec.of<ClientInboundMessage>('message'), ...back.rec.of<ClientInboundMessage>('message')].map((m) => m.id);
  expect(shown).toContain(reply.id);
  expect(back.rec.of('message:start')).toEqual([]);
  // Both tabs were told the logged text.
  const final = await logged(observer.socket, id);
  expect(final).toMatchObject({ id, text: 'one two', status: 'error' });
  expect(told).toMatchObject({ text: 'one two', status: 'error' });
  expect(nearEnd).toMatchObject({ text: 'one two', status: 'error' });
  // The runtime's own end comes too late: the stream has ended.
  expect(await ack<Ack>(rt, 'stream:end', { id })).toMatchObject({ ok: false, error: { code: 'STREAM_NOT_FOUND' } });
}, 30_000);

it('ends a stream whose start timed out but ran late in Redis: no stream stays open with nobody to end it', async () => {
  const rt = (await runtime(R[0], 'f-open')).socket;
  const observer = await tab(R[1], 'f-open', 'u2');
  // Redis knows the open script (a stream to another user), so the late EVALSHA runs.
  const warm = (await ack<Ack>(rt, 'stream:start', { to: 'u1' })).id!;
  expect(await ack<Ack>(rt, 'stream:end', { id: warm })).toMatchObject({ ok: true });
  expect(await admin.client('PAUSE', 2700, 'WRITE')).toBe('OK');
  // The open times out (2 s) and runs once Redis answers again: the stream is open in Redis, its
  // start logged, and the runtime was told SERVER_UNAVAILABLE (it has no id to end it by).
  expect(await ack<Ack>(rt, 'stream:start', { to: 'u2' })).toMatchObject({ ok: false, error: { code: 'SERVER_UNAVAILABLE' } });
  const page = async () => (await ack<HistoryAck & { ok: true }>(observer.socket, 'history', { limit: 100 })).messages;
  await waitFor(async () => (await page()).length > 0, 5000, 'the start logged');
  // The replica ends it `error` at its next sweep; a tab sees it end, and the log shows it ended.
  const [logged] = await page();
  const end = await observer.rec.wait<MessageEnd>('message:end', (e) => e.id === logged.id, 5000);
  expect(end).toMatchObject({ id: logged.id, text: '', status: 'error' });
  expect(await page()).toEqual([expect.objectContaining({ id: logged.id, text: '', status: 'error' })]);
}, 30_000);
