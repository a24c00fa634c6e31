// One bot's broadcasts against another bot's users, on one replica (docs/operations.md, per-bot delivery budget):
// what a replica delivers per second when one bot floods `'*'` to its clients, and what that does to
// the round trips of another bot's users meanwhile.
//
//   npm run build && node_modules/.bin/node bench/delivery-fairness.mjs [--clients 500]
//     [--flood-rate 1000] [--seconds 8] [--victims 20] [--hub-env KEY=VALUE,KEY=VALUE]
//
// The hub runs in its own process (`dist/main.js`, the bench settings of hub-env.mjs), the flooded
// clients in a generator process (bench/generator.mjs: they receive and drop), and this process
// holds the flooding bot (one runtime sending `reply { to: '*' }` at --flood-rate per second), the
// other bot (echoing) and its users (each one round trip per 100 ms, measured from send to echo).
// Prints the victims' p50/p99 without and with the flood, the flood's accepted broadcasts and
// deliveries per second, and how many of its replies got RATE_LIMITED.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import jwt from 'jsonwebtoken';
import { io } from 'socket.io-client';
import { generatorClient } from './generator-client.mjs';
import { benchHubEnv, HUB_NODE_FLAGS, requireHubNode } from './hub-env.mjs';

requireHubNode();
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const { freePort } = createRequire(import.meta.url)('../deploy/cluster.cjs');
const args = Object.fromEntries(process.argv.slice(2).map((a) => a.replace(/^--/, '').split(/=(.*)/s).slice(0, 2)));
const CLIENTS = Number(args.clients ?? 500);
const FLOOD_RATE = Number(args['flood-rate'] ?? 1000);
const SECONDS = Number(args.seconds ?? 8);
const VICTIMS = Number(args.victims ?? 20);
const extraEnv = Object.fromEntries(
  (args['hub-env'] ?? '')
    .split(',')
    .filter(Boolean)
    .map((kv) => kv.split('=')),
);

const SECRET = randomBytes(32).toString('hex');
const API_KEY = randomBytes(16).toString('hex');
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const children = [];

function spawnNode(script, env, { ipc = false, nodeFlags = [] } = {}) {
  const child = spawn(process.execPath, [...nodeFlags, script], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', process.env.BENCH_DEBUG ? 'inherit' : 'ignore', 'inherit', ...(ipc ? ['ipc'] : [])],
  });
  children.push(child);
  return child;
}

async function until(check, what, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

function connect(url, nsp, auth) {
  const socket = io(`${url}${nsp}`, { transports: ['websocket'], forceNew: true, reconnection: false, auth });
  return new Promise((resolve, reject) => {
    socket.once('connect', () => resolve(socket));
    socket.once('connect_error', reject);
  });
}

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;

/** Round trips so far: each message's clientMessageId is new (a repeat would be deduplicated). */
let roundTrips = 0;

/** Each victim: one round trip per 100 ms for `ms`; resolves with the sorted round-trip times. */
async function victimRoundTrips(victims, ms) {
  const times = [];
  const end = Date.now() + ms;
  await Promise.all(
    victims.map(async (socket) => {
      while (Date.now() < end) {
        const text = `rt-${++roundTrips}`;
        const started = performance.now();
        const echoed = new Promise((resolve) => {
          const onMessage = (m) => m.text === text && (socket.off('message', onMessage), resolve());
          socket.on('message', onMessage);
        });
        socket.emit('message', { clientMessageId: text, text }, () => {});
        await echoed;
        times.push(performance.now() - started);
        await sleep(Math.max(0, 100 - (performance.now() - started)));
      }
    }),
  );
  return times.sort((a, b) => a - b);
}

async function main() {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const env = benchHubEnv({
    JWT_SECRET: SECRET,
    AGENT_API_KEYS: API_KEY,
    PORT: String(port),
    HOST: '127.0.0.1',
    OPENAPI_SPEC_FILE: '/dev/null',
  });
  // The delivery budget at the hub's defaults unless --hub-env sets it: it is what this measures.
  delete env.AGENT_DELIVERY_RATE_PER_S;
  delete env.AGENT_DELIVERY_RATE_BURST;
  Object.assign(env, extraEnv);
  spawnNode('dist/main.js', env, { nodeFlags: HUB_NODE_FLAGS });
  await until(async () => (await fetch(`${url}/health/ready`)).ok, 'the hub');

  const gen = generatorClient(spawnNode('bench/generator.mjs', {}, { ipc: true }));
  const flooded = await gen.call('clients', { url, count: CLIENTS, agentIds: ['flood-bot'], secret: SECRET, tag: 'flooded' });
  if (flooded.connected !== CLIENTS) throw new Error(`only ${flooded.connected} flooded clients connected: ${flooded.firstError}`);

  const victimBot = await connect(url, '/ws/agent', { apiKey: API_KEY, agentId: 'victim-bot' });
  victimBot.on('message', (m, ack) => {
    ack?.({ ok: true });
    victimBot.emit('reply', { to: m.from, text: m.text }, () => {});
  });
  const token = (sub) => jwt.sign({ sub, exp: Math.floor(Date.now() / 1000) + 3600 }, SECRET, { algorithm: 'HS256' });
  const victims = await Promise.all(
    Array.from({ length: VICTIMS }, (_, i) => connect(url, '/ws/client', { token: token(`victim-${i}`), agentId: 'victim-bot' })),
  );
  const floodBot = await connect(url, '/ws/agent', { apiKey: API_KEY, agentId: 'flood-bot' });
  floodBot.on('disconnect', (reason) => console.error(`the flooding bot was disconnected: ${reason}`));

  const quiet = await victimRoundTrips(victims, 3000);
  console.log(
    `victims without the flood: p50 ${percentile(quiet, 50).toFixed(1)} ms, p99 ${percentile(quiet, 99).toFixed(1)} ms (${quiet.length} round trips)`,
  );

  const acks = { ok: 0, limited: 0, other: 0 };
  let flooding = true;
  const flood = (async () => {
    const started = Date.now();
    let sent = 0;
    while (flooding) {
      const due = Math.floor(((Date.now() - started) / 1000) * FLOOD_RATE);
      for (; sent < due; sent++) {
        floodBot.emit('reply', { to: '*', text: `flood ${sent}` }, (ack) => {
          if (ack?.ok) acks.ok++;
          else if (ack?.error?.code === 'RATE_LIMITED') acks.limited++;
          else acks.other++;
        });
      }
      await sleep(5);
    }
  })();
  const progress = setInterval(() => process.env.BENCH_DEBUG && console.error('acks', JSON.stringify(acks)), 1000);
  await sleep(1000); // the flood settles
  const before = { ...acks };
  const t0 = performance.now();
  const loaded = await victimRoundTrips(victims, SECONDS * 1000);
  const seconds = (performance.now() - t0) / 1000;
  const during = { ok: acks.ok - before.ok, limited: acks.limited - before.limited, other: acks.other - before.other };
  flooding = false;
  clearInterval(progress);
  await flood;
  console.log(
    `victims during the flood: p50 ${percentile(loaded, 50).toFixed(1)} ms, p99 ${percentile(loaded, 99).toFixed(1)} ms (${loaded.length} round trips)`,
  );
  console.log(
    `flood: ${FLOOD_RATE} broadcasts/s offered to ${CLIENTS} clients; accepted ${(during.ok / seconds).toFixed(0)}/s = ` +
      `${((during.ok * CLIENTS) / seconds).toFixed(0)} deliveries/s; RATE_LIMITED ${(during.limited / seconds).toFixed(0)}/s; other ${during.other}`,
  );
}

main()
  .catch((err) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(() => {
    for (const child of children) child.kill('SIGKILL');
    setTimeout(() => process.exit(), 200);
  });
