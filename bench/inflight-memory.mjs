// Memory per message in flight, by message size: the figure docs/operations.md ("Sizing") budgets
// bursts with. One hub process (the Dockerfile's node flags) on a Redis of its own; `--active`
// clients (default 1500) on four echoing bots each send one message at the same instant, a burst,
// and wait for its ack and the bot's echoed reply; three bursts per size. For each size the hub's
// peak RSS over its bursts (VmHWM, reset through /proc/<pid>/clear_refs before each size; no forced
// GC) less its RSS before them, divided by the messages of one burst, is the memory per message in
// flight. An open stream is measured the same way: `--streams` (default 1000) streams of `--stream-bytes`
// (default 8192) of text left open, RSS after against before.
//
//   npm run build && node bench/inflight-memory.mjs [--active=1500] [--sizes=1024,16384,63488]
//
// Loopback only; needs redis-server on PATH. Prints one line per size and a JSON summary.
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import jwt from 'jsonwebtoken';
import { io } from 'socket.io-client';
import { benchHubEnv, HUB_NODE_FLAGS, requireHubNode } from './hub-env.mjs';

const { freePort } = createRequire(import.meta.url)('../deploy/cluster.cjs');

requireHubNode();
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const args = Object.fromEntries(process.argv.slice(2).map((a) => a.replace(/^--/, '').split('=')));
const ACTIVE = Number(args.active ?? 1500);
const SIZES = (args.sizes ?? '1024,16384,63488').split(',').map(Number);
const STREAMS = Number(args.streams ?? 1000);
const STREAM_BYTES = Number(args['stream-bytes'] ?? 8192);
const BOTS = 4;
const BURSTS = 3;
const SECRET = 'inflight-bench-secret-of-at-least-32-characters';
const API_KEY = 'ak_inflight_bench_key_0123456789';
const MiB = 2 ** 20;
const log = (line) => process.stderr.write(`[inflight] ${line}\n`);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

const status = (pid, field) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) * 1024;

function connect(socket) {
  return new Promise((resolve, reject) => {
    socket.once('connect', () => resolve(socket));
    socket.once('connect_error', reject);
  });
}

async function waitReady(url) {
  for (let i = 0; i < 200; i++) {
    try {
      if ((await fetch(`${url}/health/ready`)).status === 200) return;
    } catch {
      // not listening yet
    }
    await sleep(100);
  }
  throw new Error('hub not ready');
}

const children = [];
process.on('exit', () => children.forEach((c) => c.kill('SIGKILL')));

// --redis=false: the embedded single replica (its in-memory log, bounded by HISTORY_MEMORY_MAX_BYTES, grows too).
const REDIS = args.redis !== 'false';
const redisPort = await freePort();
if (REDIS) children.push(spawn('redis-server', ['--port', String(redisPort), '--save', '', '--appendonly', 'no'], { stdio: 'ignore' }));
const port = await freePort();
const hub = spawn(process.execPath, [...HUB_NODE_FLAGS, 'dist/main.js'], {
  cwd: ROOT,
  env: {
    ...process.env,
    ...benchHubEnv({
      PORT: String(port),
      HOST: '127.0.0.1',
      JWT_SECRET: SECRET,
      AGENT_API_KEYS: API_KEY,
      ...(REDIS ? { REDIS_URL: `redis://127.0.0.1:${redisPort}` } : {}),
    }),
  },
  stdio: ['ignore', 'pipe', 'inherit'],
});
children.push(hub);
// The hub's warnings (slow consumers closed, say) matter to the figures: shown as they come.
hub.stdout.on('data', (chunk) => process.stderr.write(`[hub] ${chunk}`));
const url = `http://127.0.0.1:${port}`;
await waitReady(url);

const options = (auth) => ({ transports: ['websocket'], forceNew: true, reconnection: false, auth });
const agents = await Promise.all(
  Array.from({ length: BOTS }, (_, i) => {
    const socket = io(`${url}/ws/agent`, options({ apiKey: API_KEY, agentId: `bot-${i}` }));
    socket.on('message', (m, ack) => {
      ack?.({ ok: true });
      socket.emit('reply', { to: m.from, text: `echo:${m.text}`, replyTo: m.id }, () => {});
    });
    return connect(socket);
  }),
);
const clients = [];
for (let i = 0; i < ACTIVE; i += 100) {
  clients.push(
    ...(await Promise.all(
      Array.from({ length: Math.min(100, ACTIVE - i) }, (_, j) => {
        const sub = `user-${i + j}`;
        const token = jwt.sign({ sub, exp: Math.floor(Date.now() / 1000) + 3600 }, SECRET);
        return connect(io(`${url}/ws/client`, options({ token, agentId: `bot-${(i + j) % BOTS}` })));
      }),
    )),
  );
}
await sleep(3000);

let retried = 0;
/** Sends until acked ok; a retryable refusal (SERVER_UNAVAILABLE when Redis answers late) is sent again, as the SDKs do. */
async function send(client, payload) {
  for (let attempt = 0; ; attempt++) {
    const ack = await client.timeout(60_000).emitWithAck('message', payload);
    if (ack.ok) return;
    if (!ack.error?.code || !['SERVER_UNAVAILABLE', 'RATE_LIMITED', 'TIMEOUT'].includes(ack.error.code) || attempt === 5) {
      throw new Error(`message not acked ok: ${JSON.stringify(ack)}`);
    }
    retried++;
    await sleep(500 * (attempt + 1));
  }
}

async function burst(size, round) {
  const text = 'x'.repeat(size);
  const echoes = clients.map((c) => new Promise((resolve) => c.once('message', resolve)));
  await Promise.all(clients.map((c, i) => send(c, { clientMessageId: `s${size}-r${round}-${i}`, text })));
  await Promise.all(echoes);
}

/** V8 heap in use, from the hub's /metrics. */
async function heapUsed() {
  const text = await (await fetch(`${url}/metrics`)).text();
  return Number(/^nodejs_heap_size_used_bytes (\S+)$/m.exec(text)[1]);
}

const rows = [];
for (const size of SIZES) {
  await burst(size, 'warm');
  await sleep(2000);
  const before = status(hub.pid, 'VmRSS');
  writeFileSync(`/proc/${hub.pid}/clear_refs`, '5');
  const heapBefore = await heapUsed();
  let heapPeak = heapBefore;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      heapPeak = Math.max(heapPeak, await heapUsed());
      await sleep(100);
    }
  })();
  for (let r = 0; r < BURSTS; r++) await burst(size, r);
  sampling = false;
  await sampler;
  const heapPerMessage = (heapPeak - heapBefore) / ACTIVE;
  const peak = status(hub.pid, 'VmHWM');
  const perMessage = (peak - before) / ACTIVE;
  rows.push({ size, before, peak, perMessage, heapBefore, heapPeak, heapPerMessage });
  log(
    `${ACTIVE} messages of ${size} B at once: RSS ${(before / MiB).toFixed(1)} → peak ${(peak / MiB).toFixed(1)} MiB, ${(perMessage / 1024).toFixed(1)} KiB per message in flight (${(perMessage / size).toFixed(2)} × its size; V8 heap ${(heapBefore / MiB).toFixed(1)} → sampled peak ${(heapPeak / MiB).toFixed(1)} MiB, ${(heapPerMessage / 1024).toFixed(1)} KiB per message; ${retried} retried sends so far)`,
  );
}

// Open streams: each of the first STREAMS clients gets a streamed reply left open with STREAM_BYTES of text.
await sleep(2000);
const beforeStreams = status(hub.pid, 'VmRSS');
const chunk = 'y'.repeat(1024);
const opened = [];
for (let i = 0; i < Math.min(STREAMS, clients.length); i++) {
  const agent = agents[i % BOTS];
  const to = `user-${i}`;
  opened.push(
    agent
      .timeout(30_000)
      .emitWithAck('stream:start', { to })
      .then(async (ack) => {
        if (!ack.ok) throw new Error(`stream:start ${JSON.stringify(ack)}`);
        for (let b = 0; b < STREAM_BYTES / 1024; b++) {
          const d = await agent.timeout(30_000).emitWithAck('stream:delta', { id: ack.id, text: chunk });
          if (!d.ok) throw new Error(`stream:delta ${JSON.stringify(d)}`);
        }
      }),
  );
}
await Promise.all(opened);
await sleep(3000);
const afterStreams = status(hub.pid, 'VmRSS');
const perStream = (afterStreams - beforeStreams) / opened.length;
log(
  `${opened.length} open streams of ${STREAM_BYTES} B: RSS ${(beforeStreams / MiB).toFixed(1)} → ${(afterStreams / MiB).toFixed(1)} MiB, ${(perStream / 1024).toFixed(1)} KiB per open stream`,
);
console.log(JSON.stringify({ active: ACTIVE, rows, streams: { count: opened.length, bytes: STREAM_BYTES, perStream } }));
process.exit(0);
