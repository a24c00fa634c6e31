// What the hub's Redis scripts cost Redis per call, in instructions: `npm run bench:redis-scripts`.
//
// Runs a private redis-server under `valgrind --tool=callgrind` (instructions, not seconds: the same
// count for the same build and inputs whatever else the machine is doing, unlike the CPU figures of
// `npm run bench`) and makes, through the hub's own stores (dist/), the three store calls a message
// relayed between two replicas costs Redis: the client message's intake (dedupe claim, runtime
// lookup, log append, hand-off to the runtime's replica), the runtime's ack (delivered mark and
// response) and the reply's log append and publish; a streamed reply's delta (append and publish,
// the expiry left as it is, as most deltas do); then a plain SPUBLISH, the unit the baseline
// relay's round trip is made of. Each is measured against full conversations (the steady state
// under load: every append trims), `--calls=N` times (default 2,000), after a warm-up. Every
// publish has a subscriber, as in the hub. `--dist=<dir>` measures another build's stores.
//
// Needs valgrind (Debian package `valgrind`) and redis-server.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const require = createRequire(import.meta.url);
const Redis = require('ioredis');
const { freePort } = require('../deploy/cluster.cjs');
const args = Object.fromEntries(process.argv.slice(2).map((a) => a.replace(/^--/, '').split('=')));
const { RedisStore } = require(resolve(args.dist ?? join(import.meta.dirname, '..', 'dist'), 'store/redis/redis.store.js'));
const CALLS = Number(args.calls ?? 2000);
const WARMUP = 200;
const MAX_MESSAGES = 200;
const CONVERSATIONS = 10;
const AGENT = 'bot-1';
const TEXT = 'Hello, how can I reset my password on this site?';

const out = mkdtempSync(join(tmpdir(), 'relay-callgrind-'));
const port = await freePort();
const server = spawn(
  'valgrind',
  [
    '--tool=callgrind',
    `--callgrind-out-file=${join(out, 'cg.%p')}`,
    'redis-server',
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--save',
    '',
    '--appendonly',
    'no',
  ],
  { stdio: 'ignore' },
);
const control = (...flags) => execFileSync('callgrind_control', [...flags, String(server.pid)], { stdio: 'ignore' });
/** Instructions counted since the last zero, from the dump just written. */
const dumped = () => {
  const [latest] = readdirSync(out)
    .filter((name) => name.startsWith(`cg.${server.pid}.`))
    .map((name) => join(out, name))
    .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs);
  return Number(/^(?:summary|totals): (\d+)/m.exec(readFileSync(latest, 'utf8'))[1]);
};

const connect = async () => {
  for (let attempt = 0; ; attempt++) {
    const client = new Redis(port, { lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => null });
    client.on('error', () => {}); // refused while valgrind starts the server: tried again below
    try {
      await client.connect();
      return client;
    } catch (err) {
      client.disconnect();
      if (attempt === 100) throw err;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
};

const redis = await connect();
const subscriber = await connect();
try {
  const store = new RedisStore(redis, { history: { maxMessages: MAX_MESSAGES, ttlS: 604800 } });
  const replicaChannel = (replica) => `relay:dispatch:{${replica}}`;
  const room = (clientId) => `relay:sio#/ws/client#client:${AGENT}:${clientId}#`;
  // The runtime lives on replica B; the clients' replica A hands messages to it.
  await subscriber.ssubscribe(replicaChannel('replica-a'), replicaChannel('replica-b'));
  for (let c = 0; c < CONVERSATIONS; c++) await subscriber.ssubscribe(room(`user-${c}`));
  await store.presence.addRuntime(AGENT, { replicaId: 'replica-b', socketId: 'runtime-socket-b' });

  let seq = 0;
  const id = () => `0199a1b2-c3d4-7e5f-8a9b-${String(++seq).padStart(12, '0')}`;
  const ts = '2026-11-25T04:52:00.440Z';
  const conversation = (i) => `user-${i % CONVERSATIONS}`;
  const userMessage = (messageId, i) => ({
    id: messageId,
    ts,
    agentId: AGENT,
    author: 'user',
    text: TEXT,
    clientMessageId: `cm-${seq}-${i}`,
  });
  const agentMessage = () => ({ id: id(), ts, agentId: AGENT, author: 'agent', text: TEXT });

  // Full conversations: from here on every append trims.
  for (let c = 0; c < CONVERSATIONS; c++) {
    for (let k = 0; k < MAX_MESSAGES + 20; k++) await store.log.append(AGENT, `user-${c}`, agentMessage(), true);
  }

  // One open stream per conversation, for the deltas.
  const STREAM_BOUNDS = { maxBytes: 4194304, ttlMs: 1_860_000 };
  const streams = [];
  for (let c = 0; c < CONVERSATIONS; c++) {
    const message = { ...agentMessage(), text: '' };
    await store.streams.open({ message, clientId: `user-${c}`, owner: 'runtime-socket-b' }, STREAM_BOUNDS, true);
    streams.push({ agentId: AGENT, id: message.id, clientId: `user-${c}` });
  }

  const operations = {
    'client message intake (claim, runtimes, append, hand-off)': (i) => {
      const messageId = id();
      const record = { id: messageId, ts, delivered: false };
      const key = { agentId: AGENT, sub: conversation(i), clientMessageId: `cm-${seq}` };
      const request = JSON.stringify({
        t: 'req',
        id: messageId,
        from: 'replica-a',
        message: { id: messageId, ts, agentId: AGENT, from: key.sub, text: TEXT },
        timeoutMs: 10000,
        record: { key, record, ttlS: 600 },
      });
      return store.intake.admit({
        key,
        record,
        ttlS: 600,
        clientId: key.sub,
        message: userMessage(messageId, i),
        subscribersOf: room(key.sub),
        handoff: {
          seed: i,
          replicaId: 'replica-a',
          channel: { before: 'relay:dispatch:{', after: '}' },
          request: { before: `${request.slice(0, -1)},"socketId":`, after: '}', at: 0, observed: '' },
        },
      });
    },
    "runtime's ack (delivered mark, response)": (i) => {
      const record = { id: id(), ts, delivered: false };
      const key = { agentId: AGENT, sub: conversation(i), clientMessageId: `cm-${seq}` };
      const response = (result) => JSON.stringify({ t: 'res', id: record.id, result });
      // As the runtime's replica sends them (relay/dispatcher.ts): the mark, then the response, pipelined.
      return Promise.all([store.dedupe.markDelivered(key, record, 600), redis.spublish(replicaChannel('replica-a'), response('acked'))]);
    },
    'reply (append, publish)': (i) => {
      const message = agentMessage();
      return store.log.appendThenPublish(AGENT, conversation(i), message, {
        channel: room(conversation(i)),
        before: '',
        after: '',
      });
    },
    "a streamed reply's delta (append, publish)": (i) => {
      const stream = streams[i % CONVERSATIONS];
      const publication = { channel: room(stream.clientId), before: '[', after: ']' };
      const frame = { head: `{"id":${JSON.stringify(stream.id)},"seq":`, tail: ',"text":"token ","index":0}' };
      return store.streams.append(stream, { record: '[0,"token "]\n', bytes: 6 }, STREAM_BOUNDS, publication, frame, false);
    },
    "plain SPUBLISH of a request (the baseline's unit)": () =>
      redis.spublish(replicaChannel('replica-b'), `{"t":"req","id":"${id()}","text":"${TEXT}"}`),
  };

  const results = [];
  for (const [name, call] of Object.entries(operations)) {
    for (let i = 0; i < WARMUP; i++) await call(i);
    control('--zero');
    // 50 in flight, as a loaded replica's one connection carries them.
    for (let i = 0; i < CALLS; i += 50) await Promise.all(Array.from({ length: Math.min(50, CALLS - i) }, (_, j) => call(i + j)));
    control('--dump');
    results.push([name, dumped() / CALLS]);
  }
  const perRoundTrip = results.slice(0, 3).reduce((sum, [, n]) => sum + n, 0);
  console.log(`\nRedis instructions per call (callgrind, ${CALLS} calls each, full conversations of ${MAX_MESSAGES})\n`);
  console.log('| store call | instructions |\n|---|---|');
  for (const [name, n] of results) console.log(`| ${name} | ${(n / 1000).toFixed(1)}k |`);
  console.log(`| a relayed round trip between two replicas (the first three) | ${(perRoundTrip / 1000).toFixed(1)}k |`);
} finally {
  redis.disconnect();
  subscriber.disconnect();
  server.kill('SIGKILL');
  rmSync(out, { recursive: true, force: true });
}
