// `node bench/conversation-log.mjs` (after `npm run build`): the embedded conversation log
// (dist/store/memory/memory-conversation.store.js) on its own, outside a hub, for a change to the
// structures under it. `--builds=dist,<other>/dist` compares builds (each a directory holding a
// compiled store/memory/); every round runs each build in a fresh process with the hub's node flags,
// the order swapped every round (--rounds=<n>, default 4), and the table gives each figure's median
// over the rounds. Rates are per second of the process's CPU time (user + system), not of wall
// time. What a round measures, at the hub's default bounds (10,000 conversations, 200,000
// messages, 64 MiB, 200 messages and 7 days per conversation):
// - appends/s over 200 conversations (20 bots × 10 users, as in `npm run bench`), each a hit;
// - appends/s over 20,000 conversations in turn, twice the conversation bound: each a miss that
//   evicts the least recently used;
// - reads/s: a history page (readBefore, 10 messages) of one of the 200;
// - memory per conversation holding one message: V8 heap used and RSS growth over 10,000 of them,
//   read without a forced GC, then after a full gc() (heap and RSS), and the buffers outside the heap.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { HUB_NODE_FLAGS, requireHubNode } from './hub-env.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const args = Object.fromEntries(process.argv.slice(2).map((a) => a.replace(/^--/, '').split(/=(.*)/s).slice(0, 2)));
const LIMITS = { maxMessages: 200, ttlS: 604_800 };
const BOUNDS = { maxConversations: 10_000, maxMessages: 200_000, maxBytes: 64 * 1024 * 1024 };
const HOT = 200;
const CHURN = 2 * BOUNDS.maxConversations;
const APPENDS = Number(args.appends ?? 400_000);
const READS = Number(args.reads ?? 50_000);

if (args.child) await child(resolve(ROOT, args.child));
else parent();

function parent() {
  requireHubNode();
  const builds = (args.builds ?? 'dist').split(',');
  const rounds = Number(args.rounds ?? 4);
  const runs = Object.fromEntries(builds.map((b) => [b, []]));
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? builds : [...builds].reverse();
    for (const build of order) {
      const out = spawnSync(
        process.execPath,
        [...HUB_NODE_FLAGS, '--expose-gc', fileURLToPath(import.meta.url), `--child=${build}`, `--appends=${APPENDS}`, `--reads=${READS}`],
        { cwd: ROOT, encoding: 'utf8' },
      );
      if (out.status !== 0) throw new Error(`${build}: exited ${out.status}\n${out.stderr}`);
      const figures = JSON.parse(out.stdout.trim().split('\n').pop());
      runs[build].push(figures);
      process.stderr.write(`[conversation-log] round ${round + 1} ${build}: ${JSON.stringify(figures)}\n`);
    }
  }
  const median = (xs) => {
    const s = [...xs].sort((a, b) => a - b);
    return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
  };
  const rows = [
    ['appends/s, 200 conversations (hits)', 'hotAppendsPerS', 0],
    [`appends/s, ${CHURN.toLocaleString('en-US')} conversations in turn (each evicts one)`, 'churnAppendsPerS', 0],
    ['history pages/s (readBefore, 10 messages)', 'readsPerS', 0],
    ['V8 heap used per conversation, no forced GC (bytes)', 'heapPerLog', 0],
    ['V8 heap used per conversation after gc() (bytes)', 'heapPerLogAfterGc', 0],
    ['RSS growth per conversation, no forced GC (bytes)', 'rssPerLog', 0],
    ['RSS growth per conversation after gc() (bytes)', 'rssPerLogAfterGc', 0],
    ['buffers outside the heap per conversation (bytes)', 'externalPerLog', 0],
  ];
  const lines = [
    `| metric (median of ${rounds} rounds) | ${builds.join(' | ')} |${builds.length === 2 ? ` ${builds[0]} ÷ ${builds[1]} |` : ''}`,
    `|---|${builds.map(() => '---|').join('')}${builds.length === 2 ? '---|' : ''}`,
  ];
  for (const [label, key, digits] of rows) {
    const medians = builds.map((b) => median(runs[b].map((r) => r[key])));
    const ratio = builds.length === 2 && medians[1] ? ` ${(medians[0] / medians[1]).toFixed(2)} |` : builds.length === 2 ? ' n/a |' : '';
    lines.push(`| ${label} | ${medians.map((m) => m.toFixed(digits)).join(' | ')} |${ratio}`);
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}

/**
 * CPU seconds this process has run (user + system): on a shared machine, time spent waiting for a
 * core is not counted against either build.
 */
function cpuSeconds() {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
}

async function child(build) {
  const { MemoryConversationLog } = createRequire(import.meta.url)(join(build, 'store/memory/memory-conversation.store.js'));
  let n = 0;
  // Ids in the order a UUIDv7 stamper gives them: increasing strings of one length.
  const message = (agentId, text) => {
    n++;
    return { id: `0196${n.toString(16).padStart(28, '0')}`, ts: '2026-11-26T00:00:00.000Z', agentId, author: 'user', text };
  };
  const conversation = (i) => [`bot-${i % 20}`, `user-${i}`];

  const appends = (log, count, conversations) => {
    const started = cpuSeconds();
    for (let i = 0; i < count; i++) {
      const [agentId, clientId] = conversation(i % conversations);
      log.appendNow(agentId, clientId, message(agentId, 'hello there'));
    }
    return count / (cpuSeconds() - started);
  };

  // Warm-up, then the figures, each on a fresh log.
  appends(new MemoryConversationLog(LIMITS, BOUNDS), APPENDS / 4, HOT);
  appends(new MemoryConversationLog(LIMITS, BOUNDS), APPENDS / 4, CHURN);
  const hotAppendsPerS = appends(new MemoryConversationLog(LIMITS, BOUNDS), APPENDS, HOT);
  const churnAppendsPerS = appends(new MemoryConversationLog(LIMITS, BOUNDS), APPENDS, CHURN);

  const reading = new MemoryConversationLog(LIMITS, BOUNDS);
  appends(reading, HOT * 20, HOT);
  const started = cpuSeconds();
  for (let i = 0; i < READS; i++) {
    const [agentId, clientId] = conversation(i % HOT);
    await reading.readBefore(agentId, clientId, undefined, 10);
  }
  const readsPerS = READS / (cpuSeconds() - started);

  // Memory: 10,000 conversations of one message each on a fresh log, against the log empty.
  const gc = () => globalThis.gc({ type: 'major', execution: 'sync' });
  const rss = () => process.memoryUsage.rss();
  gc();
  gc();
  // The log is made after the first reading: what its structures allocate up front counts too.
  const before = { heap: process.memoryUsage().heapUsed, rss: rss(), external: process.memoryUsage().arrayBuffers };
  const log = new MemoryConversationLog(LIMITS, BOUNDS);
  const count = BOUNDS.maxConversations;
  for (let i = 0; i < count; i++) {
    const [agentId, clientId] = conversation(i);
    log.appendNow(agentId, clientId, message(agentId, 'hello there'));
  }
  const heapPerLog = (process.memoryUsage().heapUsed - before.heap) / count;
  const rssPerLog = (rss() - before.rss) / count;
  gc();
  const heapPerLogAfterGc = (process.memoryUsage().heapUsed - before.heap) / count;
  const rssPerLogAfterGc = (rss() - before.rss) / count;
  const externalPerLog = (process.memoryUsage().arrayBuffers - before.external) / count;
  if (log.byteSize === 0) throw new Error('the log held nothing');
  process.stdout.write(
    `${JSON.stringify({ hotAppendsPerS, churnAppendsPerS, readsPerS, heapPerLog, heapPerLogAfterGc, rssPerLog, rssPerLogAfterGc, externalPerLog })}\n`,
  );
}
