// The sizing rule of docs/operations.md ("Sizing") held against the image: one replica under the Helm
// chart's memory limit (`docker run --memory`, no swap) and its MAX_CONNECTIONS, on Redis as the chart
// runs it, filled to MAX_CONNECTIONS with idle clients (generator processes, bench/generator.mjs) and
// then given bursts of maximum-size messages in flight at once. The container's cgroup peak must
// stay below the limit less the headroom the rule promises (below the high-water mark, so the
// replica never even sheds), and the rule's prediction must not be below what was measured. No OOM
// kill, every message acked and its reply delivered.
//
// SIZING_SCALE (default 1) scales connections and the limit together by the rule (base memory kept,
// the per-client and per-message parts scaled), for a slower machine; the report line says which.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { GenericContainer, Network, Wait, type StartedNetwork, type StartedTestContainer } from 'testcontainers';
import { parse } from 'yaml';
import { RUN_LABEL } from './support/docker-env';
import { HUB_IMAGE, REDIS_IMAGE, ROOT } from './support/paths';
import { heapLimitBytes, predictedMemory, SIZING_RULE } from '../helpers/sizing-rule';
import { chatToken, connectAgent, hubSecrets, connectClient, type Ack, type ChatClient } from './support/peers';
import { sleep } from '../helpers/wait';

const MiB = 2 ** 20;
const values = parse(readFileSync(join(ROOT, 'helm', 'relay-hub', 'values.yaml'), 'utf8')) as {
  config: Record<string, string>;
  resources: { limits: { memory: string } };
};
/** Mi/Gi quantities as the chart writes them. */
function bytes(quantity: string): number {
  const m = /^(\d+)(Mi|Gi)$/.exec(quantity);
  if (!m) throw new Error(`unexpected quantity ${quantity}`);
  return Number(m[1]) * (m[2] === 'Gi' ? 1024 : 1) * MiB;
}

const SCALE = Number(process.env.SIZING_SCALE ?? '1');
const CHART_LIMIT = bytes(values.resources.limits.memory);
const CHART_CONNECTIONS = Number(values.config.MAX_CONNECTIONS);
const HIGH_WATER = Number(values.config.MEMORY_HIGH_WATER_RATIO);
const MAX_MESSAGE_BYTES = Number(values.config.MAX_MESSAGE_BYTES);
const CONNECTIONS = Math.round(CHART_CONNECTIONS * SCALE);
// The chart's budget of maximum-size messages in flight at once (docs/operations.md, "Sizing").
const IN_FLIGHT = Math.round(SIZING_RULE.messagesInFlight * SCALE);
const LIMIT = Math.round(CHART_LIMIT - (1 - SCALE) * (CHART_LIMIT - SIZING_RULE.container.baseBytes));
const BOTS = 4;
const RETRYABLE = new Set(['SERVER_UNAVAILABLE', 'SERVER_BUSY', 'SERVER_SHUTTING_DOWN', 'RATE_LIMITED']);
const BURSTS = 4;
const GENERATORS = 2;
// The largest text whose message and echoed reply (`echo:` + text, with to and replyTo) fit MAX_MESSAGE_BYTES.
const TEXT_BYTES = MAX_MESSAGE_BYTES - 1024;

const report = (line: string) => process.stderr.write(`[sizing] ${line}\n`);
const predicted = predictedMemory({ connections: CONNECTIONS, messagesInFlight: IN_FLIGHT, messageBytes: MAX_MESSAGE_BYTES });
const mib = (n: number) => `${(n / MiB).toFixed(1)} MiB`;

/** A load generator process (bench/generator.mjs) with a raised file-descriptor limit, over IPC. */
class Generator {
  private readonly child: ChildProcess;
  private nextId = 0;
  private readonly waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();

  constructor() {
    // As many descriptors as the hard limit allows (bench/scale.mjs raises it as root where permitted).
    const sh = 'ulimit -n "$(ulimit -Hn)"; exec "$0" "$@"';
    this.child = spawn('sh', ['-c', sh, process.execPath, join(ROOT, 'bench', 'generator.mjs')], {
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    this.child.on('message', ({ id, result, error }: { id: number; result?: unknown; error?: string }) => {
      const w = this.waiting.get(id);
      this.waiting.delete(id);
      if (error) w?.reject(new Error(`generator: ${error}`));
      else w?.resolve(result);
    });
    this.child.once('exit', (code) => this.waiting.forEach((w) => w.reject(new Error(`generator exited (${code})`))));
  }

  call<T>(cmd: string, args: object): Promise<T> {
    const id = ++this.nextId;
    return new Promise<T>((resolve, reject) => {
      this.waiting.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.child.send({ id, cmd, args });
    });
  }

  kill(): void {
    this.child.kill('SIGKILL');
  }
}

describe(`sizing: one ${HUB_IMAGE} replica at the chart's limits`, () => {
  const secrets = hubSecrets();
  let network: StartedNetwork;
  let redis: StartedTestContainer;
  let hub: StartedTestContainer;
  let url: string;
  const generators: Generator[] = [];
  const closers: (() => void)[] = [];

  /** The hub container's cgroup memory: usage now and its peak (v2 memory.peak, else v1 max_usage_in_bytes). */
  const cgroup = async (): Promise<{ usage: number; peak: number; limit: number }> => {
    const read = async (v2: string, v1: string) =>
      Number((await hub.exec(['sh', '-c', `cat ${v2} 2>/dev/null || cat ${v1}`])).output.trim());
    return {
      usage: await read('/sys/fs/cgroup/memory.current', '/sys/fs/cgroup/memory/memory.usage_in_bytes'),
      peak: await read('/sys/fs/cgroup/memory.peak', '/sys/fs/cgroup/memory/memory.max_usage_in_bytes'),
      limit: await read('/sys/fs/cgroup/memory.max', '/sys/fs/cgroup/memory/memory.limit_in_bytes'),
    };
  };

  const metric = async (name: string): Promise<number> => {
    const text = await (await fetch(`${url}/metrics`)).text();
    const line = text.split('\n').find((l) => l.startsWith(`${name} `));
    return Number(line?.split(' ')[1]);
  };

  beforeAll(async () => {
    network = await new Network().start();
    redis = await new GenericContainer(REDIS_IMAGE)
      .withLabels({ [RUN_LABEL]: 'sizing' })
      .withNetwork(network)
      .withNetworkAliases('redis')
      .withCommand(['redis-server', '--save', '', '--appendonly', 'no'])
      .withWaitStrategy(Wait.forLogMessage(/Ready to accept connections/))
      .start();
    const container = new GenericContainer(HUB_IMAGE)
      .withLabels({ [RUN_LABEL]: 'sizing' })
      .withNetwork(network)
      .withEnvironment({
        ...secrets,
        ...values.config,
        REDIS_URL: 'redis://redis:6379',
        MAX_CONNECTIONS: String(CONNECTIONS),
        // Every client comes from this host's one address, straight to the container (no proxy).
        TRUST_PROXY: 'false',
        MAX_CONNECTIONS_PER_IP: '0',
        HANDSHAKE_FAILURES_PER_MIN: '0',
        LOG_LEVEL: 'warn',
      })
      .withTmpFs({ '/tmp': 'rw,size=16m' })
      .withExposedPorts(3000)
      .withWaitStrategy(Wait.forHttp('/health/ready', 3000))
      .withStartupTimeout(60_000);
    // The chart's limit, and no swap to spill into (a pod has none).
    const hostConfig = (container as unknown as { hostConfig: { Memory?: number; MemorySwap?: number } }).hostConfig;
    hostConfig.Memory = LIMIT;
    hostConfig.MemorySwap = LIMIT;
    hub = await container.start();
    // Straight to the container's address on the bridge: the published port's userland proxy would
    // hold a second socket per client.
    url = `http://${hub.getIpAddress(network.getName())}:3000`;
    for (let i = 0; i < GENERATORS; i++) generators.push(new Generator());
  });

  afterAll(async () => {
    if (hub) {
      // What the hub said last, and how it ended, when it is no longer running: the test's failure says what went wrong.
      const state = execFileSync(
        'docker',
        ['inspect', '-f', '{{.State.Status}} exit {{.State.ExitCode}} oom {{.State.OOMKilled}}', hub.getId()],
        { encoding: 'utf8' },
      );
      if (!state.startsWith('running')) {
        const logs = execFileSync('docker', ['logs', '--tail', '30', hub.getId()], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
        process.stderr.write(`[sizing] hub ${state}${logs}\n`);
      }
    }
    closers.forEach((close) => close());
    generators.forEach((g) => g.kill());
    await hub?.stop({ timeout: 0, remove: true });
    await redis?.stop({ timeout: 0, remove: true });
    await network?.stop();
  });

  test(
    'MAX_CONNECTIONS clients and bursts of maximum-size messages stay below the limit less the promised headroom, as the rule predicts',
    async () => {
      const limits = await cgroup();
      expect(limits.limit).toBe(LIMIT);
      expect(await metric('relay_memory_limit_bytes')).toBe(LIMIT);
      let resent = 0;
      const base = (await cgroup()).usage;
      const baseHeap = await metric('nodejs_heap_size_used_bytes');

      const bots = await Promise.all(Array.from({ length: BOTS }, (_, i) => connectAgent(url, secrets.AGENT_API_KEYS, `sizing-bot-${i}`)));
      // Each bot acks and echoes every message; an echo refused with a retryable code (SERVER_UNAVAILABLE
      // when Redis answers late) is sent again, as the agent SDK does.
      for (const bot of bots) {
        bot.socket.on('message', (m: { id: string; from: string; text: string }) => {
          void (async () => {
            for (let attempt = 0; attempt < 6; attempt++) {
              const ack = (await bot.socket
                .timeout(60_000)
                .emitWithAck('reply', { to: m.from, text: `echo:${m.text}`, replyTo: m.id })
                .catch(() => null)) as Ack | null;
              if (ack?.ok || (ack && !RETRYABLE.has(ack.error.code))) return;
              resent++;
              await sleep(500 * (attempt + 1));
            }
          })();
        });
      }
      closers.push(...bots.map((b) => () => b.socket.close()));
      const active: ChatClient[] = [];
      for (let i = 0; i < IN_FLIGHT; i += 100) {
        const batch = await Promise.all(
          Array.from({ length: Math.min(100, IN_FLIGHT - i) }, (_, j) =>
            connectClient(url, chatToken(secrets.JWT_SECRET, `active-${i + j}`), `sizing-bot-${(i + j) % BOTS}`, { timeoutMs: 60_000 }),
          ),
        );
        active.push(...batch);
      }
      closers.push(...active.map((c) => () => c.socket.close()));

      // The rest of MAX_CONNECTIONS as idle clients, from the generator processes.
      const idle = CONNECTIONS - BOTS - IN_FLIGHT;
      const t0 = Date.now();
      const retried: string[] = [];
      for (let round = 0, missing = idle; missing > 0; round++) {
        const results = await Promise.all(
          generators.map((g, i) =>
            g.call<{ connected: number; failed: number; firstError?: string }>('clients', {
              url,
              count: Math.floor(missing / GENERATORS) + (i < missing % GENERATORS ? 1 : 0),
              agentIds: Array.from({ length: BOTS }, (_, b) => `sizing-bot-${b}`),
              secret: secrets.JWT_SECRET,
              tag: `idle-${round}-${i}`,
              window: 128,
            }),
          ),
        );
        missing -= results.reduce((n, r) => n + r.connected, 0);
        // A refusal with a retryable code is tried again, as the SDKs do; anything else fails the test.
        for (const r of results) if (r.failed > 0) retried.push(`${r.failed} × ${r.firstError}`);
        expect({ round, errors: results.flatMap((r) => (r.failed > 0 && !RETRYABLE.has(r.firstError!) ? [r.firstError] : [])) }).toEqual({
          round,
          errors: [],
        });
        expect(round).toBeLessThan(3);
      }
      const connectSeconds = (Date.now() - t0) / 1000;
      // At the limit: one more is refused.
      await expect(connectClient(url, chatToken(secrets.JWT_SECRET, 'one-too-many'), 'sizing-bot-0')).rejects.toThrow(
        /connection limit|websocket error/,
      );
      const connectedUsage = (await cgroup()).usage;
      const connectedHeap = await metric('nodejs_heap_size_used_bytes');
      report(
        `${CONNECTIONS} connections in ${connectSeconds.toFixed(0)} s: cgroup ${mib(base)} → ${mib(connectedUsage)} ` +
          `(${((connectedUsage - base) / CONNECTIONS).toFixed(0)} B each), V8 heap ${mib(baseHeap)} → ${mib(connectedHeap)} ` +
          `(${((connectedHeap - baseHeap) / CONNECTIONS).toFixed(0)} B each)`,
      );

      const heapLimit = Number(
        (
          await hub.exec(['node', '--max-semi-space-size=16', '-e', 'console.log(require("v8").getHeapStatistics().heap_size_limit)'])
        ).output.trim(),
      );
      report(`V8 heap limit ${mib(heapLimit)}; the rule predicts a heap of ${mib(predicted.heap)} at this load`);
      // The rule's assumption: Node sizes the heap from the container's limit (half, plus the young generation).
      expect(Math.abs(heapLimit - heapLimitBytes(LIMIT))).toBeLessThan(8 * MiB);
      // Sampled while the bursts run: V8's heap has its own limit, below the container's.
      let peakHeap = connectedHeap;
      let sampling = true;
      const sampler = (async () => {
        while (sampling) {
          peakHeap = Math.max(peakHeap, await metric('nodejs_heap_size_used_bytes'));
          await sleep(250);
        }
      })();
      const text = 'x'.repeat(TEXT_BYTES);
      /** Sends until acked; a retryable refusal (SERVER_UNAVAILABLE when Redis answers late) is sent again, as the SDKs do. */
      const send = async (c: ChatClient, payload: object): Promise<Ack> => {
        for (let attempt = 0; ; attempt++) {
          const ack = (await c.socket.timeout(60_000).emitWithAck('message', payload)) as Ack;
          if (ack.ok || !RETRYABLE.has(ack.error.code) || attempt === 5) return ack;
          resent++;
          await sleep(500 * (attempt + 1));
        }
      };
      let acked = 0;
      for (let burst = 0; burst < BURSTS; burst++) {
        const echoes = active.map(
          (c) =>
            new Promise<void>((resolve) => {
              const seen = () => c.received.some((m) => m.text.length === TEXT_BYTES + 5 && m.text.startsWith(`echo:`)) && resolve();
              c.socket.on('message', function onMessage() {
                if (seen()) c.socket.off('message', onMessage);
              });
            }),
        );
        const acks = await Promise.all(active.map((c, i) => send(c, { clientMessageId: `b${burst}-${i}`, text })));
        expect(acks.filter((a) => !a.ok)).toEqual([]);
        acked += acks.length;
        await Promise.all(echoes);
        const now = await cgroup();
        report(
          `burst ${burst + 1}: cgroup ${mib(now.usage)}, peak ${mib(now.peak)}, V8 heap peak sampled ${mib(peakHeap)}, ${resent} sends retried`,
        );
        for (const c of active) c.received.length = 0;
      }
      expect(acked).toBe(BURSTS * IN_FLIGHT);
      sampling = false;
      await sampler;

      const after = await cgroup();
      const info = JSON.parse(execFileSync('docker', ['inspect', hub.getId()], { encoding: 'utf8' })) as {
        State: { OOMKilled: boolean; Running: boolean };
      }[];
      expect(info[0].State).toMatchObject({ OOMKilled: false, Running: true });
      const prediction = predicted.container;
      process.stderr.write(
        `[sizing] scale ${SCALE}: ${CONNECTIONS} connections (${idle} idle, connected in ${connectSeconds.toFixed(0)} s${retried.length ? `, retried ${retried.join(', ')}` : ''}), ` +
          `${BURSTS} bursts of ${IN_FLIGHT} messages of ${TEXT_BYTES} B; limit ${mib(LIMIT)}; cgroup usage: started ${mib(base)}, ` +
          `connected ${mib(connectedUsage)} (${((connectedUsage - base) / (CONNECTIONS - 0)).toFixed(0)} B/connection), ` +
          `after ${mib(after.usage)}; peak ${mib(after.peak)} = ${((after.peak / LIMIT) * 100).toFixed(1)} % of the limit; ` +
          `V8 heap: limit ${mib(heapLimit)}, connected ${mib(connectedHeap)} (${((connectedHeap - baseHeap) / CONNECTIONS).toFixed(0)} B/connection), peak ${mib(peakHeap)}; ` +
          `rule predicts ${mib(prediction)} (${((prediction / LIMIT) * 100).toFixed(1)} %), high-water mark ${mib(HIGH_WATER * LIMIT)}\n`,
      );
      // The promise: the peak stays below the high-water mark (the headroom 1 - MEMORY_HIGH_WATER_RATIO),
      // and the rule, which sized the chart, does not under-predict it.
      expect(after.peak).toBeLessThan(LIMIT * HIGH_WATER);
      expect(after.peak).toBeLessThanOrEqual(prediction);
      expect(prediction).toBeLessThanOrEqual(LIMIT * HIGH_WATER);
    },
    10 * 60_000,
  );
});
