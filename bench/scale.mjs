// Scale up: many idle authenticated clients on ONE server process while 1,000 of them relay, the
// hub against the baseline relay (bench/baseline.mjs), each measured alone on a fresh process.
// `npm run bench -- --phases=scale` runs it from bench/run.mjs; `node bench/scale.mjs` alone too.
//
// Options: --clients=<n> (default 50000, idle + active), --active=<n> (default 1000), --settle=<s>
// (default 20: RSS is read this long after the connect burst, without any forced GC, as a
// container limit sees it), --relay-seconds=<n> (default 10), --kinds=baseline,hub,
// --hub-node-flags="…" (node flags for the hub process only; default those of deploy/Dockerfile,
// `--max-semi-space-size=16 --no-allocation-site-pretenuring`; the baseline runs with Node's defaults).
//
// Loopback only. One source address has ~28,000 ephemeral ports (32768–60999), so clients are
// spread round robin over 127.0.0.2 … (one address per 10,000 clients; a different set for each
// server, so sockets left in TIME_WAIT by the first run cannot starve the second). Generators are
// separate processes (one per 12,500 clients). The server and the generators run under
// `prlimit --nofile=200000` (the default hard limit of 20,000 is below 50,000 sockets). Bounded:
// every step has a timeout and the whole phase gives up after 15 minutes.
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generatorClient } from './generator-client.mjs';
import { benchHubEnv, HUB_NODE_FLAGS } from './hub-env.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const NOFILE = 200_000;
const PER_ADDRESS = 10_000;
const PER_GENERATOR = 12_500;
const PHASE_LIMIT_MS = 15 * 60_000;

const log = (line) => process.stderr.write(`[scale] ${line}\n`);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const mib = (bytes) => (bytes / 2 ** 20).toFixed(1);

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

function rssBytes(pid) {
  return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) * 1024;
}

/** User + system CPU seconds of a process. */
function cpuSeconds(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** The child processes of one measurement, all killed at its end. */
class Processes {
  children = new Set();

  constructor(nofile) {
    this.nofile = nofile;
  }

  /** `node [flags] script` with the file-descriptor limit raised (as root) for 50,000 sockets. */
  spawn(script, env, { ipc = false, nodeFlags = [] } = {}) {
    const sh = `ulimit -Hn ${this.nofile} && ulimit -n ${this.nofile} && exec "$0" "$@"`;
    const child = spawn('sh', ['-c', sh, process.execPath, ...nodeFlags, script], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe', ...(ipc ? ['ipc'] : [])],
    });
    this.children.add(child);
    child.once('exit', () => this.children.delete(child));
    child.stdout.resume();
    child.stderr.on('data', (chunk) => process.stderr.write(`[${script.split('/').pop()} ${child.pid}] ${chunk}`));
    return child;
  }

  async stop(child) {
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const gone = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await gone;
  }

  async stopAll() {
    for (const child of [...this.children]) await this.stop(child);
  }
}

function generator(procs) {
  const child = procs.spawn('bench/generator.mjs', {}, { ipc: true, nodeFlags: ['--max-old-space-size=4096'] });
  return generatorClient(child, 300_000);
}

async function startServer(procs, kind, env, nodeFlags) {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const common = { PORT: String(port), HOST: '127.0.0.1' };
  const flags = ['--expose-gc', '--require', join(ROOT, 'bench', 'gc-signal.cjs'), ...nodeFlags];
  const child =
    kind === 'hub'
      ? procs.spawn(env.hubScript, { ...env.hub, ...common }, { nodeFlags: flags })
      : procs.spawn('bench/baseline.mjs', { ...common, JWT_SECRET: env.secret }, { nodeFlags: flags });
  const exited = new Promise((_, reject) => child.once('exit', (code) => reject(new Error(`${kind} exited early (${code})`))));
  exited.catch(() => {});
  const ready = kind === 'hub' ? `${url}/health/ready` : url;
  const deadline = Date.now() + 30_000;
  const up = (async () => {
    for (;;) {
      if (
        await fetch(ready).then(
          (r) => r.ok,
          () => false,
        )
      )
        return;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${kind} on ${url}`);
      await sleep(100);
    }
  })();
  await Promise.race([up, exited]);
  return { kind, url, child, pid: child.pid, exited };
}

/**
 * One server, fresh: connect burst; RSS of the idle clients without GC, then after gc() and after
 * the memory-reducing GC; then relay for the active clients (all others still connected).
 */
async function measureOne(kind, opts, env, addressBase) {
  const procs = new Processes(opts.nofile);
  const nodeFlags = kind === 'hub' ? opts.hubNodeFlags : [];
  const server = await startServer(procs, kind, env, nodeFlags);
  const gens = Array.from({ length: Math.max(1, Math.ceil(opts.clients / PER_GENERATOR)) }, () => generator(procs));
  const addresses = Array.from({ length: Math.ceil(opts.clients / PER_ADDRESS) }, (_, i) => `127.0.0.${addressBase + i}`);
  try {
    // Load the connection code paths once, then a reference reading with no forced GC.
    await gens[0].call('clients', { url: server.url, count: 50, agentIds: ['warm'], secret: env.secret, tag: 'warm' });
    await gens[0].call('closeAll');
    await sleep(3000);
    const rss0 = rssBytes(server.pid);

    await gens[0].call('agents', { url: server.url, agentIds: env.agentIds, apiKey: env.apiKey, group: 'active' });
    const idleCount = opts.clients - opts.active;
    const cpu0 = cpuSeconds(server.pid);
    const t0 = Date.now();
    const share = (total, i) => Math.floor(total / gens.length) + (i < total % gens.length ? 1 : 0);
    const burst = await Promise.all(
      gens.map(async (gen, i) => {
        const localAddresses = addresses; // round robin in every generator: each address gets an even share
        const active = await gen.call('clients', {
          url: server.url,
          count: share(opts.active, i),
          agentIds: env.agentIds,
          secret: env.secret,
          tag: `active${i}`,
          group: 'active',
          localAddresses,
        });
        const idle = await gen.call('clients', {
          url: server.url,
          count: share(idleCount, i),
          agentIds: env.idleAgentIds,
          secret: env.secret,
          tag: `idle${i}`,
          group: 'idle',
          localAddresses,
        });
        return { active, idle };
      }),
    );
    const connectSeconds = (Date.now() - t0) / 1000;
    const connectCpu = cpuSeconds(server.pid) - cpu0;
    const connected = burst.reduce((n, r) => n + r.active.connected + r.idle.connected, 0);
    const activeConnected = burst.reduce((n, r) => n + r.active.connected, 0);
    const failed = burst.reduce((n, r) => n + r.active.failed + r.idle.failed, 0);
    const firstError = burst.map((r) => r.idle.firstError ?? r.active.firstError).find(Boolean);
    log(
      `${kind}: ${connected} clients connected in ${connectSeconds.toFixed(1)} s (${failed} failed${firstError ? `: ${firstError}` : ''}), ` +
        `${connectCpu.toFixed(1)} s server CPU, ${(connected / connectSeconds).toFixed(0)}/s`,
    );

    await sleep(opts.settleS * 1000);
    const rssIdle = rssBytes(server.pid);
    process.kill(server.pid, 'SIGWINCH'); // heap spaces [committed, used] MiB on stderr (gc-signal.cjs)
    log(`${kind}: RSS ${opts.settleS} s after the burst, no forced GC: ${mib(rss0)} → ${mib(rssIdle)} MiB`);

    process.kill(server.pid, 'SIGUSR2');
    await sleep(2000);
    const rssGc = rssBytes(server.pid);
    process.kill(server.pid, 'SIGURG');
    await sleep(2000);
    const rssRetained = rssBytes(server.pid);
    process.kill(server.pid, 'SIGWINCH');
    const loops = await Promise.all(
      gens.map((gen) => gen.call('closedLoop', { warmupMs: 2000, durationMs: opts.relaySeconds * 1000, group: 'active' })),
    );
    const perSecond = loops.reduce((n, r) => n + r.perSecond, 0);
    const rtErrors = loops.reduce((n, r) => n + r.errors, 0);
    const rssRelaying = rssBytes(server.pid);
    log(
      `${kind}: ${activeConnected} active clients, ${perSecond.toFixed(0)} round trips/s (${rtErrors} errors), RSS ${mib(rssRelaying)} MiB`,
    );

    const still = (await Promise.all(gens.map((g) => g.call('count', {})))).reduce((n, c) => n + c.connected, 0);
    const per = (rss) => (rss - rss0) / connected;
    const r = {
      connected,
      failed,
      stillConnected: still,
      connectSeconds,
      connectCpu,
      rss0,
      rssIdle,
      rssGc,
      rssRetained,
      perIdle: per(rssIdle),
      perGc: per(rssGc),
      perRetained: per(rssRetained),
      activeConnected,
      perSecond,
      rtErrors,
      rssRelaying,
    };
    log(
      `${kind}: per client ${(r.perIdle / 1000).toFixed(1)} KB idle without GC, ${(r.perGc / 1000).toFixed(1)} KB after gc(), ` +
        `${(r.perRetained / 1000).toFixed(1)} KB after the memory-reducing GC; ${still}/${connected} still connected`,
    );
    return r;
  } finally {
    for (const gen of gens) gen.child.disconnect?.();
    await procs.stopAll();
  }
}

/**
 * The file-descriptor limit the processes get: NOFILE if the hard limit may be raised (root with
 * CAP_SYS_RESOURCE), else the hard limit as it is. One server socket is one descriptor.
 */
function descriptorLimit() {
  const probe = spawnSync('sh', ['-c', `ulimit -Hn ${NOFILE} 2>/dev/null; ulimit -Hn`], { encoding: 'utf8' });
  const hard = probe.stdout.trim();
  return hard === 'unlimited' ? NOFILE : Number(hard);
}

/** Runs the phase for each kind; returns { baseline, hub } results. */
export async function scalePhase(options = {}) {
  const nofile = descriptorLimit();
  const requested = Number(options.clients ?? 50_000);
  // Descriptors the server needs besides its client sockets: runtimes, listeners, files, Redis.
  const clients = Math.min(requested, nofile - 200);
  if (clients < requested) {
    log(
      `the file-descriptor hard limit is ${nofile} and cannot be raised here (needs root with CAP_SYS_RESOURCE): ` +
        `${clients} clients instead of ${requested}`,
    );
  }
  const opts = {
    requested,
    nofile,
    clients,
    active: Number(options.active ?? 1000),
    settleS: Number(options.settle ?? 20),
    relaySeconds: Number(options['relay-seconds'] ?? 10),
    kinds: (options.kinds ?? 'baseline,hub').split(','),
    hubNodeFlags: options['hub-node-flags']?.split(' ').filter(Boolean) ?? HUB_NODE_FLAGS,
  };
  const secret = randomBytes(32).toString('hex');
  const apiKey = randomBytes(16).toString('hex');
  const env = {
    secret,
    apiKey,
    agentIds: Array.from({ length: 20 }, (_, i) => `bot-${i}`),
    idleAgentIds: Array.from({ length: 100 }, (_, i) => `idle-${i}`),
    hubScript: options.hub ?? 'dist/main.js',
    hub: benchHubEnv({
      JWT_SECRET: secret,
      AGENT_API_KEYS: apiKey,
      MAX_CONNECTIONS: '0',
      OPENAPI_SPEC_FILE: join(ROOT, 'bench', 'results', 'openapi.json'),
    }),
  };
  const results = {};
  const limit = setTimeout(() => {
    log(`gave up after ${PHASE_LIMIT_MS / 60_000} minutes`);
    process.exit(1);
  }, PHASE_LIMIT_MS);
  try {
    let base = 2;
    for (const kind of opts.kinds) {
      results[kind] = await measureOne(kind, opts, env, base);
      base += Math.ceil(opts.clients / PER_ADDRESS) + 1;
      await sleep(2000);
    }
  } finally {
    clearTimeout(limit);
  }
  return { opts, results };
}

/** Markdown rows for bench/run.mjs's table (and so docs/benchmarks.md). */
export function scaleRows({ opts, results }) {
  const h = results.hub;
  const b = results.baseline;
  const kb = (r, key) => (r ? (r[key] / 1000).toFixed(1) : 'n/a');
  const ratio = (key) => (h && b ? (h[key] / b[key]).toFixed(2) : 'n/a');
  const n = opts.clients.toLocaleString('en-US');
  const verdict = (ok) => (ok === undefined ? '—' : ok ? 'pass' : '**FAIL**');
  const held = h && h.connected >= opts.requested && h.stillConnected === h.connected && h.perSecond > 0;
  const lean = h && b ? h.perIdle <= 20_000 && h.perIdle <= b.perIdle : undefined;
  const rows = [
    [
      `${n} clients on one replica: connected (failed), connect time`,
      (r) => (r ? `${r.connected} (${r.failed}), ${r.connectSeconds.toFixed(1)} s` : 'n/a'),
      ratio('connectSeconds'),
      `${opts.requested.toLocaleString('en-US')}`,
      h ? held : undefined,
    ],
    [
      `… RSS per client ${opts.settleS} s after the burst, no forced GC (KB)`,
      (r) => kb(r, 'perIdle'),
      ratio('perIdle'),
      '≤ 20 KB, ≤ baseline',
      lean,
    ],
    [`… RSS per client after gc() (KB)`, (r) => kb(r, 'perGc'), ratio('perGc'), '—'],
    [`… RSS per client after the memory-reducing GC (KB)`, (r) => kb(r, 'perRetained'), ratio('perRetained'), '—'],
    [
      `… round trips/s for ${opts.active.toLocaleString('en-US')} active clients alongside (server RSS at the end, MiB)`,
      (r) => (r ? `${r.perSecond.toFixed(0)} (${mib(r.rssRelaying)})` : 'n/a'),
      ratio('perSecond'),
      '—',
    ],
  ];
  return rows.map(([metric, value, r, target, ok]) => `| ${metric} | ${value(h)} | ${value(b)} | ${r} | ${target} | ${verdict(ok)} |`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = Object.fromEntries(process.argv.slice(2).map((a) => a.replace(/^--/, '').split(/=(.*)/s).slice(0, 2)));
  const out = await scalePhase(args);
  process.stdout.write(`${scaleRows(out).join('\n')}\n${JSON.stringify(out, null, 2)}\n`);
}
