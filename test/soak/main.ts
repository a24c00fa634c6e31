// `npm run soak`: hub replicas on Redis behind nginx, embed-SDK clients and agent-SDK runtimes
// exchanging traffic while a seeded fault schedule runs, then a checker over what every peer
// recorded. See docs/soak.md. Built by scripts/soak.mjs (esbuild) into dist/soak/ and run from there.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { check } from './checker';
import { startClients } from './clients';
import { createNetns, netnsUnavailable, type SoakNetns } from './netns';
import { parseArgs, soakOptions, USAGE, type SoakOptions } from './options';
import { runOutage } from './outage';
import { startHostile, type HostileTenant } from './hostile-tenant';
import { formatResult, type FaultRun, type SoakResult } from './report';
import { startRuntimes } from './runtimes';
import { buildSchedule, describeSchedule, isInfra, type Fault, type FaultKind } from './schedule';
import { startSoakCluster, STREAM_IDLE_TIMEOUT_MS } from './soak-cluster';
import { startRedis } from './topology';
import { sleep } from '../helpers/wait';

const CLIENT_ACK_TIMEOUT_MS = 10_000;
/** Sockets of the hostile tenant's junk user: each of its activities and deltas costs one delivery per socket. */
const HOSTILE_SINK_SOCKETS = 60;
const MB = 1024 * 1024;

async function soak(options: SoakOptions): Promise<SoakResult> {
  const startedAt = Date.now();
  const dir = mkdtempSync(join(tmpdir(), `relay-soak-${options.seed}-`));
  const log = (line: string) => process.stderr.write(`[${((Date.now() - startedAt) / 1000).toFixed(1).padStart(6)} s] ${line}\n`);
  log(`seed ${options.seed}, Redis ${options.redis}, run directory ${dir}`);

  const cleanups: (() => Promise<void> | void)[] = [];
  const cleanup = async () => {
    for (const fn of cleanups.splice(0).reverse()) await Promise.resolve(fn()).catch((err: Error) => log(`cleanup: ${err.message}`));
  };

  let netns: SoakNetns | undefined;
  const unavailable = new Set<FaultKind>();
  const whyNoNetns = options.netns ? netnsUnavailable() : 'turned off by --no-netns';
  let netnsNote: string;
  if (whyNoNetns === undefined) {
    netns = createNetns();
    cleanups.push(() => netns?.destroy());
    const delay = netns.delayMethod;
    if (typeof delay === 'object') {
      unavailable.add('netns-latency');
      log(`latency fault skipped: ${delay.unavailable}`);
    }
    netnsNote = `${netns.name}: hub-${options.replicas} at ${netns.nsAddress}, Redis reached at ${netns.rootAddress}; delay by ${typeof delay === 'object' ? 'none' : delay}`;
  } else {
    for (const k of ['netns-partition', 'netns-latency', 'netns-loss'] as const) unavailable.add(k);
    netnsNote = `none, the partition/latency/loss faults are skipped (${whyNoNetns})`;
    log(`network-namespace faults skipped: ${whyNoNetns}`);
  }
  if (options.redis === 'single') unavailable.add('sentinel-failover');

  try {
    const redis = await startRedis({ kind: options.redis, dir, host: netns?.rootAddress ?? '127.0.0.1', onLog: fileLog(dir) });
    cleanups.push(() => redis.stop());
    log(`Redis ${options.redis} up`);
    const cluster = await startSoakCluster({ dir, replicas: options.replicas, redis, netns, onLog: fileLog(dir) });
    cleanups.push(() => cluster.stop());
    log(`${options.replicas} hubs and nginx up at ${cluster.url}`);
    const bots = Array.from({ length: options.bots }, (_, i) => `soak-bot-${i + 1}`);
    const runtimes = await startRuntimes({
      script: join(__dirname, 'runtime.cjs'),
      dir,
      count: options.runtimes,
      url: cluster.url,
      apiKey: cluster.secrets.AGENT_API_KEYS,
      bots,
      broadcastEveryMs: options.broadcastEveryMs,
      streamEvery: options.streamEvery,
    });
    cleanups.push(() => runtimes.stop());
    log(`${options.runtimes} runtimes of ${bots.length} bots connected`);
    const clients = await startClients({
      url: cluster.url,
      jwtSecret: cluster.secrets.JWT_SECRET,
      count: options.clients,
      bots,
      sendEveryMs: options.sendEveryMs,
      ackTimeoutMs: CLIENT_ACK_TIMEOUT_MS,
    });
    cleanups.push(() => clients.close());
    log(`${options.clients} clients connected`);
    let hostile: HostileTenant | undefined;
    if (options.hostile) {
      hostile = await startHostile({
        script: join(__dirname, 'hostile.cjs'),
        dir,
        url: cluster.url,
        apiKey: cluster.secrets.AGENT_API_KEYS,
        jwtSecret: cluster.secrets.JWT_SECRET,
        bot: 'soak-hostile',
        sinkSockets: HOSTILE_SINK_SOCKETS,
      });
      cleanups.push(() => void hostile?.stop(0));
      log(`hostile tenant flooding as soak-hostile (${HOSTILE_SINK_SOCKETS} sockets of its junk user)`);
    }

    const schedule = buildSchedule({
      seed: options.seed,
      durationMs: options.seconds * 1000,
      replicas: options.replicas,
      runtimes: options.runtimes,
      clients: options.clients,
      unavailable,
    });
    const scheduleLines = describeSchedule(schedule);
    log(`schedule of seed ${options.seed}:\n${scheduleLines.join('\n')}`);

    const trafficStartedAt = Date.now();
    clients.startTraffic();
    const runs: FaultRun[] = [];
    const execute = async (fault: Fault, index: number): Promise<void> => {
      const wait = trafficStartedAt + fault.at - Date.now();
      if (wait > 0) await sleep(wait);
      const run: FaultRun = { kind: fault.kind, plannedAt: fault.at, startedAt: Date.now() - trafficStartedAt, endedAt: 0, note: '' };
      runs.push(run);
      log(`fault ${fault.kind} starts (${describeSchedule([fault])[0].trim()})`);
      try {
        run.note = await inject(fault, index);
      } catch (err) {
        run.error = (err as Error).message;
      }
      run.endedAt = Date.now() - trafficStartedAt;
      log(
        `fault ${fault.kind} over: ${run.error ? `ERROR ${run.error}` : run.note}; ${clients.connected()}/${options.clients} clients connected`,
      );
    };
    const inject = async (fault: Fault, index: number): Promise<string> => {
      const replica = cluster.replicas[fault.target];
      switch (fault.kind) {
        case 'replica-kill':
          await replica.kill('SIGKILL');
          await sleep(fault.durationMs);
          await replica.start();
          return `${replica.name} killed, back after ${fault.durationMs} ms + its start`;
        case 'replica-freeze':
          replica.freeze();
          await sleep(fault.durationMs);
          replica.thaw();
          return `${replica.name} stopped ${fault.durationMs} ms`;
        case 'redis-restart':
          return redis.restart();
        case 'sentinel-failover':
          return redis.failover();
        case 'netns-partition':
        case 'netns-latency':
        case 'netns-loss':
          if (fault.kind === 'netns-partition') netns!.partition();
          else if (fault.kind === 'netns-latency') await netns!.delay(300);
          else netns!.loss(5);
          await sleep(fault.durationMs);
          netns!.heal();
          return `${fault.kind.slice(6)} on ${replica.name} for ${fault.durationMs} ms`;
        case 'runtime-kill':
          await runtimes.kill(fault.target, fault.durationMs);
          return `runtime ${fault.target} killed, new process after ${fault.durationMs} ms`;
        case 'client-burst':
          return `${clients.dropConnections(fault.target, options.seed + index)} connections cut at once`;
      }
    };
    const infra = (async () => {
      for (const [i, f] of schedule.entries()) if (isInfra(f.kind)) await execute(f, i);
    })();
    const peers = Promise.all(schedule.flatMap((f, i) => (isInfra(f.kind) ? [] : [execute(f, i)])));
    await Promise.all([infra, peers, sleep(options.seconds * 1000)]);
    netns?.heal();

    const hostileSummary = await hostile?.stop(5000);
    log('traffic stops; waiting for every send to settle');
    const unsettled = await clients.stopTraffic(CLIENT_ACK_TIMEOUT_MS * 3);
    log(`${unsettled} sends unsettled; runtimes go quiet`);
    await runtimes.quiet(15_000);
    // A stream of a killed replica is ended by another replica's sweep within the idle timeout.
    const streamsSettled = Date.now() + STREAM_IDLE_TIMEOUT_MS + 10_000;
    while (clients.openStreams() > 0 && Date.now() < streamsSettled) await sleep(250);
    log(`${clients.openStreams()} streams still open on the clients`);
    log('every client reads its log');
    await clients.loadLogs(60_000);

    // For the post-mortem of a failed run (the directory is removed when the run passes).
    writeFileSync(join(dir, 'clients.json'), JSON.stringify({ trafficStartedAt, faults: runs, clients: clients.records() }));
    const faultCounts: Partial<Record<FaultKind, number>> = {};
    for (const r of runs) faultCounts[r.kind] = (faultCounts[r.kind] ?? 0) + 1;
    const result = check({
      clients: clients.records(),
      runtime: runtimes.records(),
      unexpectedExits: cluster.unexpectedExits,
      runtimeCrashes: runtimes.crashes,
      resources: cluster.resources(),
      trafficStartedAt,
      faultsRun: runs.length,
      faultErrors: runs.filter((r) => r.error).map((r) => `${r.kind} at ${r.startedAt} ms: ${r.error}`),
      limits: { rssBytes: 400 * MB, fdsOverBase: options.clients + 100 + (options.hostile ? HOSTILE_SINK_SOCKETS : 0) },
      // A client burst cuts some clients' connections only, which the latency rule may well see.
      faultWindows: runs
        .filter((r) => r.kind !== 'client-burst')
        .map((r) => ({ from: trafficStartedAt + r.startedAt, to: trafficStartedAt + r.endedAt })),
      hostile: hostileSummary,
    });
    await cleanup();
    const soakResult: SoakResult = {
      pass: result.verdicts.every((v) => v.pass),
      seed: options.seed,
      redis: options.redis,
      seconds: options.seconds,
      wallSeconds: Math.round((Date.now() - startedAt) / 1000),
      netns: netnsNote,
      schedule: scheduleLines,
      faults: runs,
      faultCounts,
      check: result,
    };
    writeFileSync(join(dir, 'verdict.md'), `${formatResult(soakResult)}\n`);
    if (soakResult.pass && !options.keep) rmSync(dir, { recursive: true, force: true });
    else log(`run directory kept: ${dir} (hub logs, runtime records)`);
    return soakResult;
  } finally {
    await cleanup();
  }
}

/** Every process's output into <dir>/<name>.log, for the post-mortem of a failed run. */
function fileLog(dir: string): (name: string, line: string) => void {
  return (name, line) => writeFileSync(join(dir, `${name}.log`), `${line}\n`, { flag: 'a' });
}

async function main(): Promise<void> {
  // process.exit runs the exit handlers each part installed: they kill its process groups and
  // delete the network namespace. A signal's default action would skip them.
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => process.exit(130));
  const args = parseArgs(process.argv.slice(2));
  if (args.help !== undefined) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  if (args.outage !== undefined) {
    const { outage, ...rest } = args;
    void outage;
    const result = await runOutage(rest);
    if (rest.json) writeFileSync(rest.json, JSON.stringify(result, null, 2));
    return;
  }
  const options = soakOptions(args);
  const result = await soak(options);
  process.stdout.write(`${formatResult(result)}\n`);
  if (options.json) writeFileSync(options.json, JSON.stringify(result, null, 2));
  process.exitCode = result.pass ? 0 : 1;
}

main().then(
  () => process.exit(),
  (err: unknown) => {
    process.stderr.write(`soak: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(2);
  },
);
