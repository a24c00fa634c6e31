// Where an idle client's heap goes: a heap snapshot of a fresh server (hub or baseline, the bench's
// settings, as bench/scale.mjs starts them) with no clients, then one with N idle websocket clients
// (from a generator process), and the objects the second holds that the first did not, per client,
// grouped by constructor and by retainer (bench/heap-diff.mjs). Heap snapshots collect garbage first.
//
// `npm run build && node bench/heap-per-client.mjs --clients=2000 --kinds=baseline,hub [--hub=<dist/main.js>] [--rows=60]`
// (Node 24 first on PATH). The snapshots are left in a temporary directory, named in the output.
import { mkdtempSync, readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HUB_NODE_FLAGS, requireHubNode } from './hub-env.mjs';
import { heapDiff, table } from './heap-diff.mjs';
import { generator, Processes, scaleEnv, startServer } from './scale-processes.mjs';

const log = (line) => process.stderr.write(`[heap] ${line}\n`);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Signals the server to write a heap snapshot into `dir`; resolves with its path once written. */
async function snapshot(server, dir) {
  const had = new Set(readdirSync(dir));
  process.kill(server.pid, 'SIGTTIN');
  for (let last = -1; ;) {
    await sleep(1000);
    const file = readdirSync(dir).find((name) => !had.has(name));
    if (!file) continue;
    // The server answers once the write (synchronous, on its main thread) is done.
    await fetch(server.url).catch(() => {});
    const size = statSync(join(dir, file)).size;
    if (size === last) return join(dir, file);
    last = size;
  }
}

async function measure(kind, opts, env) {
  const dir = mkdtempSync(join(tmpdir(), `heap-${kind}-`));
  const procs = new Processes(20_000);
  const flags = [`--heapsnapshot-signal=SIGTTIN`, `--diagnostic-dir=${dir}`, ...(kind === 'hub' ? HUB_NODE_FLAGS : [])];
  try {
    const server = await startServer(procs, kind, env, flags);
    const gen = generator(procs);
    await gen.call('clients', { url: server.url, count: 50, agentIds: ['warm'], secret: env.secret, tag: 'warm' });
    await gen.call('closeAll');
    await gen.call('agents', { url: server.url, agentIds: env.agentIds, apiKey: env.apiKey });
    await sleep(2000);
    const before = await snapshot(server, dir);
    const res = await gen.call('clients', {
      url: server.url,
      count: opts.clients,
      agentIds: env.idleAgentIds,
      secret: env.secret,
      tag: 'idle',
    });
    log(`${kind}: ${res.connected} idle clients (${res.failed} failed)`);
    await sleep(5000);
    const after = await snapshot(server, dir);
    gen.child.disconnect?.();
    return { before, after, clients: res.connected };
  } finally {
    await procs.stopAll();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  requireHubNode();
  const args = Object.fromEntries(process.argv.slice(2).map((a) => a.replace(/^--/, '').split(/=(.*)/s).slice(0, 2)));
  const opts = { clients: Number(args.clients ?? 2000), rows: Number(args.rows ?? 60) };
  const env = scaleEnv(args.hub ?? 'dist/main.js');
  for (const kind of (args.kinds ?? 'baseline,hub').split(',')) {
    const { before, after, clients } = await measure(kind, opts, env);
    const { byKind, byRetainer } = heapDiff(before, after);
    process.stdout.write(`# ${kind}: ${clients} idle clients (${before} → ${after})\n\n`);
    process.stdout.write(
      `## by kind\n${table(byKind, clients, opts.rows)}\n\n## by retainer\n${table(byRetainer, clients, opts.rows)}\n\n`,
    );
  }
}
