// Redis load per shard, one server vs a 3-master Redis Cluster, same run (issue 13): two hub
// replicas (deploy/cluster.cjs, CLUSTER_REDIS-style topologies), bots on replica 1, users on
// replica 2, closed-loop round trips (message → ack → the bot's reply) for --seconds=<n> (default
// 8) per topology. Per master: CPU (INFO CPU used_cpu_sys+used_cpu_user delta) and network bytes
// (INFO STATS total_net_input_bytes+total_net_output_bytes delta) per 1,000 round trips; and the
// round trips per second. Needs `npm run build`, redis-server, redis-cli and nginx.
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { benchHubEnv, requireHubNode } from './hub-env.mjs';

const require = createRequire(import.meta.url);
const { startCluster } = require('../deploy/cluster.cjs');
const { RelayAgent } = require('../dist/sdk/agent/index.js');
const jwt = require('jsonwebtoken');
const { io } = require('socket.io-client');

const args = Object.fromEntries(process.argv.slice(2).map((a) => a.replace(/^--/, '').split('=')));
const SECONDS = Number(args.seconds ?? 8);
const CLIENTS = Number(args.clients ?? 100);
const BOTS = 30;
const log = (line) => process.stderr.write(`[redis-shards] ${line}\n`);

// startCluster sets NODE_ENV=production itself.
const HUB_ENV = benchHubEnv();

function info(port, section) {
  const text = execFileSync('redis-cli', ['-p', String(port), 'INFO', section], { encoding: 'utf8' });
  return Object.fromEntries(
    text
      .split('\r\n')
      .filter((l) => l.includes(':'))
      .map((l) => l.split(':')),
  );
}

function sample(port) {
  const cpu = info(port, 'cpu');
  const stats = info(port, 'stats');
  return {
    cpuS: Number(cpu.used_cpu_sys) + Number(cpu.used_cpu_user),
    bytes: Number(stats.total_net_input_bytes) + Number(stats.total_net_output_bytes),
  };
}

function masters(handle, topology) {
  if (topology === 'single') return [handle.redis.port];
  const port = handle.env.REDIS_CLUSTER_NODES.split(',')[0].split(':')[1];
  const nodes = execFileSync('redis-cli', ['-p', port, 'CLUSTER', 'NODES'], { encoding: 'utf8' });
  return nodes
    .split('\n')
    .filter((l) => /\bmaster\b/.test(l) && !l.includes('fail'))
    .map((l) => Number(l.split(' ')[1].split(':')[1].split('@')[0]));
}

async function measure(topology) {
  const handle = await startCluster({ replicas: 2, redis: topology, env: HUB_ENV });
  const closers = [];
  try {
    const [a, b] = handle.replicas;
    for (let i = 0; i < BOTS; i++) {
      const agent = new RelayAgent({ url: a.url, apiKey: handle.secrets.AGENT_API_KEYS, agentId: `bot-${i}` });
      agent.on('error', () => {});
      agent.onMessage((m) => agent.reply(m.from, m.text).then(() => undefined));
      await agent.connect();
      closers.push(() => agent.close());
    }
    const sockets = [];
    for (let i = 0; i < CLIENTS; i++) {
      const token = jwt.sign({ sub: `user-${i}`, exp: Math.floor(Date.now() / 1000) + 3600 }, handle.secrets.JWT_SECRET);
      const socket = io(`${b.url}/ws/client`, {
        transports: ['websocket'],
        forceNew: true,
        reconnection: false,
        auth: { token, agentId: `bot-${i % BOTS}` },
      });
      await new Promise((resolve, reject) => {
        socket.once('session', resolve);
        socket.once('connect_error', reject);
      });
      sockets.push(socket);
      closers.push(() => socket.disconnect());
    }
    let roundTrips = 0;
    let errors = 0;
    let running = true;
    let n = 0;
    const loop = async (socket) => {
      while (running) {
        const id = `m${++n}`;
        const reply = new Promise((resolve) => {
          const on = (m) => {
            if (m.text !== id) return;
            socket.off('message', on);
            resolve();
          };
          socket.on('message', on);
        });
        const ack = await socket
          .timeout(10_000)
          .emitWithAck('message', { clientMessageId: id, text: id })
          .catch(() => ({ ok: false }));
        if (!ack.ok) {
          errors++;
          continue;
        }
        await reply;
        roundTrips++;
      }
    };
    // Warm-up, then the measured window.
    const loops = sockets.map((s) => loop(s));
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const ports = masters(handle, topology);
    const before = ports.map(sample);
    const startCount = roundTrips;
    const t0 = Date.now();
    await new Promise((resolve) => setTimeout(resolve, SECONDS * 1000));
    const after = ports.map(sample);
    const done = roundTrips - startCount;
    const elapsedS = (Date.now() - t0) / 1000;
    running = false;
    await Promise.all(loops);
    const perShard = ports.map((port, i) => ({
      port,
      cpuMsPer1k: ((after[i].cpuS - before[i].cpuS) * 1000 * 1000) / done,
      kbPerRt: (after[i].bytes - before[i].bytes) / done / 1024,
    }));
    return { topology, masters: ports.length, rtPerS: done / elapsedS, errors, perShard };
  } finally {
    for (const close of closers) close();
    await handle.stop();
  }
}

requireHubNode();
const rows = [];
for (const topology of ['single', 'cluster']) {
  log(`measuring ${topology}…`);
  rows.push(await measure(topology));
}
const fmt = (x, d = 1) => x.toFixed(d);
const lines = [
  `Redis load per relayed round trip, 2 hub replicas, ${CLIENTS} closed-loop clients, ${BOTS} bots, ${SECONDS} s (\`node bench/redis-shards.mjs\`):`,
  '',
  '| Redis | masters | round trips/s | Redis CPU ms per 1,000 round trips, per master | KiB per round trip, per master | errors |',
  '|---|---|---|---|---|---|',
  ...rows.map(
    (r) =>
      `| ${r.topology === 'single' ? 'one server' : 'Redis Cluster'} | ${r.masters} | ${fmt(r.rtPerS, 0)} | ${r.perShard.map((s) => fmt(s.cpuMsPer1k)).join(' / ')} (sum ${fmt(r.perShard.reduce((t, s) => t + s.cpuMsPer1k, 0))}) | ${r.perShard.map((s) => fmt(s.kbPerRt, 2)).join(' / ')} (sum ${fmt(
        r.perShard.reduce((t, s) => t + s.kbPerRt, 0),
        2,
      )}) | ${r.errors} |`,
  ),
];
console.log(lines.join('\n'));
process.exit(0);
