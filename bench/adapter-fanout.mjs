// How many Redis pub/sub messages each replica receives per relayed unicast round trip (a client
// message to the bot, acked, and the bot's reply to that client), by Socket.IO adapter and by how
// a client message reaches the runtime's replica, for N replicas. The goal: the count on a replica
// that holds neither peer stays 0, so the per-replica cost does not grow with N.
//
//   npm run build && node bench/adapter-fanout.mjs [--replicas 2,3,4,6] [--messages 200]
//
// Each configuration runs N real hubs (dist/hub.js) in this process on one redis-server spawned on
// a free port; counts come from each hub's relay_redis_pubsub_messages_received_total (canary
// probes excluded), i.e. messages its subscriber connection actually received.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { clusterVariant } from './adapter-variants.mjs';

const require = createRequire(import.meta.url);
const { createHub, configFrom, RelayAgent } = require('../dist/index.js');
const { createLogger } = require('../dist/logging/logger.js');
const { freePort, redisBinary } = require('../deploy/cluster.cjs');
const { io } = require('socket.io-client');
const jwt = require('jsonwebtoken');
const Redis = require('ioredis');

const { values } = parseArgs({
  options: { replicas: { type: 'string', default: '2,3,4,6' }, messages: { type: 'string', default: '200' } },
});
const REPLICAS = values.replicas.split(',').map(Number);
const MESSAGES = Number(values.messages);
const JWT_SECRET = 'bench-secret-bench-secret-bench-secret-0123';
const AGENT_KEY = 'bench-agent-key-0123456789';

const VARIANTS = [
  { name: 'classic adapter, broadcast-with-ack', cluster: { adapter: 'classic', dispatch: 'adapter-ack' } },
  { name: 'classic adapter, point-to-point', cluster: { adapter: 'classic', dispatch: 'direct' } },
  { name: 'sharded dynamic, broadcast-with-ack', cluster: { adapter: 'sharded', dispatch: 'adapter-ack' } },
  { name: 'sharded dynamic, point-to-point (default)', cluster: { adapter: 'sharded', dispatch: 'direct' } },
];

async function startRedis() {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'bench-redis-'));
  const proc = spawn(redisBinary(), ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], {
    stdio: 'ignore',
  });
  const url = `redis://127.0.0.1:${port}`;
  for (const deadline = Date.now() + 10_000; ;) {
    const probe = new Redis(url, { lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 });
    probe.on('error', () => {});
    try {
      await probe.connect();
      await probe.ping();
      probe.disconnect();
      break;
    } catch {
      probe.disconnect();
      if (Date.now() > deadline) throw new Error('redis-server did not start');
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  return { url, stop: () => (proc.kill('SIGKILL'), rmSync(dir, { recursive: true, force: true })) };
}

async function receivedBy(hub) {
  const metric = await hub.metrics.registry.getSingleMetric('relay_redis_pubsub_messages_received_total').get();
  const bytes = await hub.metrics.registry.getSingleMetric('relay_redis_pubsub_bytes_received_total').get();
  const sum = (m) => m.values.filter((v) => v.labels.kind !== 'canary').reduce((a, v) => a + v.value, 0);
  return { messages: sum(metric), bytes: sum(bytes) };
}

async function run(variant, replicas, redisUrl, runIndex) {
  const hubs = [];
  for (let i = 0; i < replicas; i++) {
    const config = configFrom({
      NODE_ENV: 'test',
      HOST: '127.0.0.1',
      PORT: '0',
      LOG_LEVEL: 'silent',
      DEMO_ENABLED: 'false',
      API_DOCS_ENABLED: 'false',
      REDIS_URL: redisUrl,
      JWT_SECRET,
      AGENT_API_KEYS: AGENT_KEY,
      MESSAGE_RATE_PER_S: '0',
      USER_MESSAGE_RATE_PER_S: '0',
    });
    const hub = await createHub(config, {
      logger: createLogger('silent'),
      cluster: { ...clusterVariant(variant.cluster), keyPrefix: `bench${runIndex}:` },
    });
    // listen() also starts the presence keeper and the pub/sub canary, as in production.
    hubs.push({ hub, url: `http://127.0.0.1:${await hub.listen(0, '127.0.0.1')}` });
  }
  const agent = new RelayAgent({ url: hubs[0].url, apiKey: AGENT_KEY, agentId: 'bot' });
  agent.onMessage((m) => agent.reply(m.from, `echo ${m.text}`));
  await agent.connect();
  const token = jwt.sign({ sub: 'user-1', exp: Math.floor(Date.now() / 1000) + 3600 }, JWT_SECRET);
  const client = io(`${hubs[1].url}/ws/client`, {
    transports: ['websocket'],
    forceNew: true,
    reconnection: false,
    auth: { token, agentId: 'bot' },
  });
  await new Promise((resolve, reject) => (client.once('session', resolve), client.once('connect_error', reject)));
  const roundTrip = async (n) => {
    const reply = new Promise((resolve) => client.once('message', resolve));
    const ack = await client.timeout(10_000).emitWithAck('message', { clientMessageId: `m${n}`, text: `m${n}` });
    if (!ack.ok) throw new Error(`message ${n}: ${ack.error.code}`);
    await reply;
  };
  for (let n = 0; n < 20; n++) await roundTrip(`warm${n}`);
  const before = await Promise.all(hubs.map(({ hub }) => receivedBy(hub)));
  for (let n = 0; n < MESSAGES; n++) await roundTrip(n);
  const after = await Promise.all(hubs.map(({ hub }) => receivedBy(hub)));
  client.disconnect();
  agent.close();
  await Promise.all(hubs.map(({ hub }) => hub.close()));
  const per = after.map((a, i) => ({
    messages: (a.messages - before[i].messages) / MESSAGES,
    bytes: (a.bytes - before[i].bytes) / MESSAGES,
  }));
  const idle = per.slice(2);
  return {
    agentReplica: per[0].messages,
    clientReplica: per[1].messages,
    idleReplica: idle.length ? Math.max(...idle.map((p) => p.messages)) : null,
    total: per.reduce((a, p) => a + p.messages, 0),
    totalBytes: per.reduce((a, p) => a + p.bytes, 0),
  };
}

const redis = await startRedis();
const rows = [];
let runIndex = 0;
try {
  for (const variant of VARIANTS) {
    for (const replicas of REPLICAS) {
      const r = await run(variant, replicas, redis.url, runIndex++);
      rows.push({ variant: variant.name, N: replicas, ...r });
      process.stderr.write('.');
    }
  }
} finally {
  redis.stop();
}
process.stderr.write('\n');

const fmt = (v) => (v === null ? '—' : Number.isInteger(v) ? String(v) : v.toFixed(2));
const header = ['configuration', 'N', 'agent replica', 'client replica', 'idle replica (max)', 'all replicas', 'bytes, all replicas'];
const lines = rows.map((r) => [
  r.variant,
  r.N,
  fmt(r.agentReplica),
  fmt(r.clientReplica),
  fmt(r.idleReplica),
  fmt(r.total),
  fmt(Math.round(r.totalBytes)),
]);
const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => String(l[i]).length)));
const row = (cells) => `| ${cells.map((c, i) => String(c).padEnd(widths[i])).join(' | ')} |`;
console.log(
  `Redis pub/sub messages received per relayed unicast round trip (${MESSAGES} round trips; agent on replica 1, client on replica 2)`,
);
console.log(row(header));
console.log(row(widths.map((w) => '-'.repeat(w))));
for (const l of lines) console.log(row(l));
