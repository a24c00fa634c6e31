// `npm run soak -- --outage`: how long widgets on the embed SDK's logic take to be back after every
// hub replica was down, and what the hubs see meanwhile. See docs/soak.md, "Time back after an outage".
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { httpOk } from '../../deploy/managed-process.cjs';
import { mintToken } from '../helpers/tokens';
import { RelayChat } from '../../sdk/browser/src';
import { number } from './options';
import { startSoakCluster } from './soak-cluster';
import { startRedis } from './topology';
import { sleep, waitFor } from '../helpers/wait';

export interface OutageResult {
  widgets: number;
  outageSeconds: number;
  backoff: { baseMs?: number; capMs?: number } | 'SDK default';
  /** nginx's max_fails per replica (deploy/cluster.cjs: 3). */
  edgeMaxFails: number;
  /** Seconds from the hub answering again (a replica's /health/ready 200) until each widget was connected. */
  reconnect: { p50: number; p95: number; max: number; all: boolean };
  /** Seconds until every replica was ready, and until nginx answered /health/ready, on the same clock. */
  allReplicasReadyAfter: number;
  edgeReadyAfter: number;
  /** Client handshakes the hubs counted per second while the widgets came back: peak one-second bucket and mean. */
  handshakesPerS: { peak: number; mean: number };
  /** Handshakes the hubs refused, and engine refusals (connection limits, draining), after the restart. */
  refusals: { handshakes: number; engine: number; byCode: Record<string, number> };
  /** Requests nginx answered on /socket.io/ per second while every replica was down (the widgets' retry load). */
  edgeAttemptsPerSDuringOutage: number;
}

export async function runOutage(args: Record<string, string>): Promise<OutageResult> {
  const widgets = number(args, 'widgets', 2000);
  const outageSeconds = number(args, 'outage-seconds', 60);
  const backoff =
    args['backoff-cap-ms'] || args['backoff-base-ms']
      ? {
          ...(args['backoff-base-ms'] ? { baseMs: number(args, 'backoff-base-ms', 500) } : {}),
          ...(args['backoff-cap-ms'] ? { capMs: number(args, 'backoff-cap-ms', 30_000) } : {}),
        }
      : undefined;
  const log = (line: string) => process.stderr.write(`[outage] ${line}\n`);
  const dir = mkdtempSync(join(tmpdir(), 'relay-outage-'));
  const redis = await startRedis({ kind: 'single', dir, host: '127.0.0.1' });
  // All widgets come through one nginx from one address: the per-address limit is for real crowds.
  const edgeMaxFails = number(args, 'edge-max-fails', 3);
  const cluster = await startSoakCluster({
    dir,
    replicas: 3,
    redis,
    env: { MAX_CONNECTIONS_PER_IP: '0', LOG_LEVEL: 'error' },
    edgeMaxFails,
  });
  const chats: RelayChat[] = [];
  try {
    const connectedAt: (number | undefined)[] = [];
    const lastError: string[] = [];
    for (let i = 0; i < widgets; i++) {
      const sub = `w${i}`;
      const chat = new RelayChat({
        url: cluster.url,
        agentId: 'outage-bot',
        token: () => Promise.resolve(mintToken({ sub }, cluster.secrets.JWT_SECRET)),
        persist: false,
        ...(backoff ? { backoff } : {}),
      });
      chat.on('error', (e) => (lastError[i] = e.code));
      chat.on('state', ({ state }) => {
        if (state === 'connected') connectedAt[i] = Date.now();
        else connectedAt[i] = undefined;
      });
      chats.push(chat);
      if (i % 100 === 99) await sleep(200); // the first connect of a page load, not a storm
    }
    await waitFor(() => chats.every((c) => c.state === 'connected'), 180_000, 'every widget connected');
    log(`${widgets} widgets connected; every replica dies for ${outageSeconds} s`);

    const accessLog = join(dir, 'nginx', 'access.log');
    await Promise.all(cluster.replicas.map((r) => r.kill('SIGKILL')));
    const downAt = Date.now();
    log(`replicas killed: ${cluster.replicas.map((r) => (r.running ? 'still running' : 'down')).join(', ')}`);
    await sleep(Math.min(5000, outageSeconds * 500));
    const before = lines(accessLog);
    const measuredFrom = Date.now();
    await sleep(Math.max(0, downAt + outageSeconds * 1000 - Date.now()));
    const edgeRate = (lines(accessLog) - before) / ((Date.now() - measuredFrom) / 1000);

    log('replicas start again');
    const starting = cluster.replicas.map((r) => r.start());
    // The hub answers again: the first replica ready (nginx may take longer to use it: edgeReadyAfter).
    while (!(await Promise.all(cluster.replicas.map((r) => httpOk(`${r.url}/health/ready`)))).some(Boolean)) await sleep(50);
    const backAt = Date.now();
    log('the hub answers again');
    let edgeAt: number | undefined;
    void (async () => {
      while (!(await httpOk(`${cluster.url}/health/ready`))) await sleep(50);
      edgeAt = Date.now();
    })();
    const samples: { at: number; accepted: number; refused: Record<string, number>; engine: number }[] = [];
    const sampler = setInterval(() => {
      void Promise.all(cluster.replicas.map((r) => scrape(r.url))).then((per) => {
        const refused: Record<string, number> = {};
        for (const p of per) for (const [code, n] of Object.entries(p.refused)) refused[code] = (refused[code] ?? 0) + n;
        samples.push({
          at: Date.now(),
          accepted: per.reduce((n, p) => n + p.accepted, 0),
          refused,
          engine: per.reduce((n, p) => n + p.engine, 0),
        });
      });
    }, 500);
    await Promise.all(starting);
    const allReadyAt = Date.now();
    await waitFor(() => chats.every((c) => c.state === 'connected'), 120_000, 'every widget back').catch((err: Error) => {
      const stuck = new Map<string, number>();
      chats.forEach((c, i) => {
        if (c.state === 'connected') return;
        const key = `${c.state} after ${lastError[i] ?? 'no error'}`;
        stuck.set(key, (stuck.get(key) ?? 0) + 1);
      });
      log(`${err.message}; not back: ${[...stuck].map(([k, n]) => `${n} ${k}`).join(', ')}`);
    });
    await sleep(1000);
    clearInterval(sampler);

    const times = connectedAt.map((t) => (t === undefined ? Infinity : Math.max(0, t - backAt) / 1000)).sort((a, b) => a - b);
    const at = (q: number) => times[Math.min(times.length - 1, Math.ceil(q * times.length) - 1)];
    const perSecond: number[] = [];
    for (let i = 1; i < samples.length; i++) {
      const dt = (samples[i].at - samples[i - 1].at) / 1000;
      perSecond.push((samples[i].accepted - samples[i - 1].accepted + sum(samples[i].refused) - sum(samples[i - 1].refused)) / dt);
    }
    const lastSample = samples.at(-1) ?? { refused: {}, engine: 0, accepted: 0, at: 0 };
    const window = Math.max(1, at(1) === Infinity ? 120 : at(1));
    const result: OutageResult = {
      widgets,
      outageSeconds,
      backoff: backoff ?? 'SDK default',
      reconnect: { p50: round(at(0.5)), p95: round(at(0.95)), max: round(at(1)), all: times.every(Number.isFinite) },
      edgeMaxFails,
      allReplicasReadyAfter: round((allReadyAt - backAt) / 1000),
      edgeReadyAfter: edgeAt === undefined ? Infinity : round((edgeAt - backAt) / 1000),
      handshakesPerS: {
        peak: Math.round(Math.max(0, ...perSecond)),
        mean: Math.round((lastSample.accepted + sum(lastSample.refused)) / window),
      },
      refusals: { handshakes: sum(lastSample.refused), engine: lastSample.engine, byCode: lastSample.refused },
      edgeAttemptsPerSDuringOutage: Math.round(edgeRate),
    };
    process.stdout.write(`${formatOutage(result)}\n`);
    return result;
  } finally {
    chats.forEach((c) => c.close());
    await cluster.stop();
    await redis.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

export function formatOutage(r: OutageResult): string {
  const backoff = r.backoff === 'SDK default' ? 'SDK default' : JSON.stringify(r.backoff);
  return [
    `| widgets | outage | backoff | nginx max_fails | p50 | p95 | max | all replicas ready | nginx ready | handshakes/s peak (mean) | refusals | retries/s at the edge while down |`,
    `|---|---|---|---|---|---|---|---|---|---|---|---|`,
    `| ${r.widgets} | ${r.outageSeconds} s | ${backoff} | ${r.edgeMaxFails} | ${r.reconnect.p50} s | ${r.reconnect.p95} s | ${r.reconnect.max} s${r.reconnect.all ? '' : ' (not all back)'} | ${r.allReplicasReadyAfter} s | ${r.edgeReadyAfter} s | ${r.handshakesPerS.peak} (${r.handshakesPerS.mean}) | ${r.refusals.handshakes + r.refusals.engine} | ${r.edgeAttemptsPerSDuringOutage} |`,
  ].join('\n');
}

function round(n: number): number {
  return Number.isFinite(n) ? Math.round(n * 10) / 10 : n;
}

function sum(counts: Record<string, number>): number {
  return Object.values(counts).reduce((a, b) => a + b, 0);
}

function lines(file: string): number {
  try {
    if (statSync(file).size === 0) return 0;
    return readFileSync(file, 'utf8').split('\n').length - 1;
  } catch {
    return 0;
  }
}

function emptyCounts(): { accepted: number; refused: Record<string, number>; engine: number } {
  return { accepted: 0, refused: {}, engine: 0 };
}

/** Client handshakes accepted and refused (by code) and engine refusals, from one replica's /metrics. */
async function scrape(url: string): Promise<{ accepted: number; refused: Record<string, number>; engine: number }> {
  const counts = emptyCounts();
  try {
    const text = await (await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(2000) })).text();
    for (const m of text.matchAll(/^relay_handshakes_total\{([^}]*)\} (\d+)/gm)) {
      if (!m[1].includes('namespace="/ws/client"')) continue;
      const code = /code="([^"]*)"/.exec(m[1])?.[1] ?? '';
      if (m[1].includes('result="accepted"')) counts.accepted += Number(m[2]);
      else counts.refused[code || 'none'] = (counts.refused[code || 'none'] ?? 0) + Number(m[2]);
    }
    for (const m of text.matchAll(/^relay_engine_refusals_total\{[^}]*\} (\d+)/gm)) counts.engine += Number(m[1]);
  } catch {
    // a replica still starting
  }
  return counts;
}
