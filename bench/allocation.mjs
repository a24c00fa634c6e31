// The allocation phase of `npm run bench` (`--phases=allocation`, not in the default set): bytes
// each server process allocates and retains per relayed round trip, by payload size, the hub
// against the baseline relay in the same run; and per streamed delta byte.
//
// What is counted, in the server process only (docs/benchmarks.md, "Allocation per round trip"):
// - on the V8 heap: bytes allocated, collected objects included (bench/gc-signal.cjs: what each
//   garbage collection found in use less what the previous one left, from V8's GC profiler);
// - off it: every byte malloc'd (bench/malloc-count.c, preloaded with LD_PRELOAD and compiled here
//   with `cc`): every Buffer's backing store, socket reads and writes, libuv, V8's own zones.
//   V8's heap pages are mmap'd, not malloc'd, so nothing is counted twice.
// Both are running totals read before and after a closed-loop slice (warm-up included) and divided
// by the round trips of the slice. Retained: the heap in use plus ArrayBuffers after a plain full
// GC at the end of a payload size's slices, against the same before them; and RSS as it stands at
// the end of the slices (no forced GC) and after that GC.
//
// Servers: one replica (the hub's embedded store), one replica over Redis, two replicas over Redis
// (runtimes on one, clients on the other), each against the baseline with the same Redis. Payloads:
// the text padded to 100 B, 8 KiB and 64 KiB (--alloc-sizes=100,8192,65536); the runtimes echo it.
// Streaming: each of 200 streams a closed loop of deltas of 6 B and of 1 KiB, one replica.
// Options: --alloc-sizes, --alloc-configs=1,1r,2 (which servers), --rounds (slices per server,
// default 3 here), --alloc-seconds=<n> (measured seconds per slice, default 2).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { STREAM_HUB_ENV } from './streaming.mjs';

/** The allocation phase's load from the command line. */
export function allocationLoad(args) {
  return {
    sizes: (args['alloc-sizes'] ?? '100,8192,65536').split(',').map(Number),
    configs: (args['alloc-configs'] ?? '1,1r,2').split(','),
    rounds: Number(args.rounds ?? 3),
    measureMs: Number(args['alloc-seconds'] ?? 2) * 1000,
    warmupMs: 500,
    streams: 200,
    deltaSizes: [6, 1024],
  };
}

const CONFIGS = {
  1: { label: '1 replica', redis: false, replicas: 1 },
  '1r': { label: '1 replica over Redis', redis: true, replicas: 1 },
  2: { label: '2 replicas over Redis', redis: true, replicas: 2 },
};

/** Compiles the malloc counter into bench/results/malloc-count/<pid>/; returns the env that preloads it. */
function mallocCounter(root) {
  // Per run: another run at the same time must not replace the library under its servers.
  const out = join(root, 'bench', 'results', 'malloc-count', String(process.pid));
  const lib = join(out, 'malloc-count.so');
  mkdirSync(out, { recursive: true });
  execFileSync('cc', ['-shared', '-fPIC', '-O2', '-o', lib, join(root, 'bench', 'malloc-count.c')]);
  const dir = join(out, 'counts');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  return { env: { LD_PRELOAD: lib, MALLOC_COUNT_DIR: dir }, dir };
}

/** Bytes malloc'd by `pid` so far (the counter file bench/malloc-count.c maps). */
function nativeBytes(dir, pid) {
  const file = join(dir, String(pid));
  if (!existsSync(file)) throw new Error(`no malloc counter for ${pid}: was bench/malloc-count.c preloaded?`);
  return Number(readFileSync(file).readBigUInt64LE(0));
}

/**
 * Runs the phase. `ctx` is bench/run.mjs's toolbox: { root, gen, startServer, startRedis, stop,
 * alternate, median, heapOf, gcOf, rssOf, log, agentIds, apiKey, secret, kinds, connectLoad }.
 */
export async function allocationPhase(ctx, load) {
  const counter = mallocCounter(ctx.root);
  const rows = [];
  const sum = (values) => values.reduce((a, b) => a + b, 0);
  const totals = async (servers) => {
    const heaps = await Promise.all(servers.map((s) => ctx.heapOf(s)));
    return { heap: sum(heaps.map((h) => h.allocated)), native: sum(servers.map((s) => nativeBytes(counter.dir, s.pid))) };
  };
  /** Heap in use plus ArrayBuffers after a plain full GC, summed over `servers`, in bytes. */
  const settled = async (servers) => {
    const rssNoGc = sum(servers.map((s) => ctx.rssOf(s.pid)));
    await Promise.all(servers.map((s) => ctx.gcOf(s)));
    const heaps = await Promise.all(servers.map((s) => ctx.heapOf(s)));
    const mib = 2 ** 20;
    return {
      rssNoGc,
      rssGc: sum(servers.map((s) => ctx.rssOf(s.pid))),
      used: sum(heaps.map((h) => (h.heapUsed + h.arrayBuffers) * mib)),
    };
  };

  for (const key of load.configs) {
    const config = CONFIGS[key];
    const redis = config.redis ? await ctx.startRedis() : undefined;
    const servers = {};
    try {
      for (const kind of ctx.kinds) {
        servers[kind] = [];
        for (let i = 0; i < config.replicas; i++) servers[kind].push(await ctx.startServer(kind, redis?.url, {}, counter.env));
      }
      for (const kind of ctx.kinds) await ctx.connectLoad(ctx.gen, kind, servers[kind][0], servers[kind].at(-1), `al${key}`);
      // Unmeasured: the smallest payload for 2 s, so that compiling the code paths (V8 mallocs its
      // compilers' memory) falls outside the slices. Not the largest: a failure it caused (the hub
      // over Redis once stopped relaying 64 KiB messages, docs/benchmarks.md) took every row with it.
      for (const kind of ctx.kinds)
        await ctx.gen.call('closedLoop', { warmupMs: 0, durationMs: 2000, group: kind, payloadBytes: load.sizes[0] });
      for (const size of load.sizes) {
        const before = {};
        for (const kind of ctx.kinds) before[kind] = await settled(servers[kind]);
        let rtTotal = { baseline: 0, hub: 0 };
        const slices = await ctx.alternate(
          async (kind) => {
            const t0 = await totals(servers[kind]);
            const r = await ctx.gen.call('closedLoop', {
              warmupMs: load.warmupMs,
              durationMs: load.measureMs,
              group: kind,
              payloadBytes: size,
            });
            const t1 = await totals(servers[kind]);
            rtTotal[kind] += r.total;
            const n = r.total || 1;
            return {
              heap: (t1.heap - t0.heap) / n,
              native: (t1.native - t0.native) / n,
              rt: r.perSecond,
              errors: r.errors,
              firstError: r.firstError,
            };
          },
          ctx.kinds,
          load.rounds,
        );
        for (const kind of ctx.kinds) {
          const after = await settled(servers[kind]);
          const s = slices[kind];
          const row = {
            config: config.label,
            size,
            kind,
            heap: ctx.median(s.map((x) => x.heap)),
            native: ctx.median(s.map((x) => x.native)),
            rt: ctx.median(s.map((x) => x.rt)),
            errors: sum(s.map((x) => x.errors)),
            firstError: s.find((x) => x.firstError)?.firstError,
            stalled: s.some((x) => x.rt === 0),
            retained: (after.used - before[kind].used) / (rtTotal[kind] || 1),
            usedAfter: after.used,
            rssNoGc: after.rssNoGc,
            rssGc: after.rssGc,
          };
          rows.push(row);
          ctx.log(
            `allocation, ${kind}, ${config.label}, ${size} B: heap ${(row.heap / 1000).toFixed(1)} KB + native ${(row.native / 1000).toFixed(1)} KB per round trip ` +
              `(slices heap ${s.map((x) => (x.heap / 1000).toFixed(1)).join(', ')}; native ${s.map((x) => (x.native / 1000).toFixed(1)).join(', ')}), ` +
              `${row.rt.toFixed(0)} round trips/s, ${row.errors} errors${s.find((x) => x.firstError)?.firstError ? ` (${s.find((x) => x.firstError).firstError})` : ''}; ` +
              `retained ${(row.retained / 1000).toFixed(2)} KB per round trip, heap + ArrayBuffers in use after gc() ${(after.used / 2 ** 20).toFixed(1)} MiB; ` +
              `RSS ${(after.rssNoGc / 2 ** 20).toFixed(0)} MiB without forced GC, ${(after.rssGc / 2 ** 20).toFixed(0)} after gc()`,
          );
        }
      }
    } finally {
      await ctx.gen.call('closeAll').catch(() => {});
      for (const server of Object.values(servers).flat()) await ctx.stop(server.child);
      if (redis) await ctx.stop(redis.child);
    }
  }
  const streaming = await streamingRows(ctx, load, counter, totals);
  return { rows, streaming, load };
}

/** Bytes allocated per streamed delta, one replica: closed-loop streams with deltas of each size. */
async function streamingRows(ctx, load, counter, totals) {
  const servers = {};
  const out = [];
  try {
    for (const kind of ctx.kinds) servers[kind] = await ctx.startServer(kind, undefined, STREAM_HUB_ENV, counter.env);
    for (const kind of ctx.kinds) {
      await ctx.gen.call('agents', { url: servers[kind].url, agentIds: ctx.agentIds, apiKey: ctx.apiKey, group: kind });
      await ctx.gen.call('streamClients', {
        url: servers[kind].url,
        count: load.streams,
        agentIds: ctx.agentIds,
        secret: ctx.secret,
        tag: `as-${kind}`,
        group: kind,
      });
    }
    for (const bytes of load.deltaSizes) {
      const slices = await ctx.alternate(
        async (kind) => {
          await ctx.gen.call('streamOpen', { group: kind });
          const t0 = await totals([servers[kind]]);
          const r = await ctx.gen.call('streamClosedLoop', {
            warmupMs: load.warmupMs,
            durationMs: load.measureMs,
            group: kind,
            deltaBytes: bytes,
          });
          const t1 = await totals([servers[kind]]);
          await ctx.gen.call('streamEnd', { group: kind });
          const n = r.sent || 1;
          return { heap: (t1.heap - t0.heap) / n, native: (t1.native - t0.native) / n, dps: r.perSecond };
        },
        ctx.kinds,
        load.rounds,
      );
      for (const kind of ctx.kinds) {
        const s = slices[kind];
        const row = {
          bytes,
          kind,
          heap: ctx.median(s.map((x) => x.heap)),
          native: ctx.median(s.map((x) => x.native)),
          dps: ctx.median(s.map((x) => x.dps)),
        };
        out.push(row);
        ctx.log(
          `allocation, ${kind}, streaming ${bytes} B deltas: heap ${row.heap.toFixed(0)} B + native ${row.native.toFixed(0)} B per delta ` +
            `(${((row.heap + row.native) / bytes).toFixed(1)} per delta byte), ${row.dps.toFixed(0)} deltas/s`,
        );
      }
    }
  } finally {
    await ctx.gen.call('closeAll').catch(() => {});
    for (const server of Object.values(servers)) await ctx.stop(server.child);
  }
  return out;
}

/** The phase's tables (markdown). */
export function allocationTable({ rows, streaming, load }) {
  const kb = (n) => (n / 1000).toFixed(1);
  const find = (config, size, kind) => rows.find((r) => r.config === config && r.size === size && r.kind === kind);
  const lines = [
    '| allocation per round trip | payload | hub: heap + native = total (KB) | baseline: heap + native = total (KB) | hub ÷ baseline | hub per payload byte beyond 100 B | retained per round trip, hub / baseline (KB) | hub RSS no forced GC / after gc() (MiB) | baseline RSS no forced GC / after gc() (MiB) |',
    '|---|---|---|---|---|---|---|---|---|',
  ];
  const configs = [...new Set(rows.map((r) => r.config))];
  for (const config of configs) {
    for (const size of load.sizes) {
      const h = find(config, size, 'hub');
      const b = find(config, size, 'baseline');
      if (!h || !b) continue;
      const small = find(config, load.sizes[0], 'hub');
      // The payload crosses the hub twice per round trip (the message in, the reply out): bytes
      // allocated per payload byte of each relayed message, beyond the smallest size's cost.
      const slope =
        size > load.sizes[0] && small ? (h.heap + h.native - small.heap - small.native) / (2 * (size - load.sizes[0])) : undefined;
      const mib = (n) => (n / 2 ** 20).toFixed(0);
      // A slice with errors or no round trip at all measured something else than a relayed message.
      const failed = (who, r) =>
        r.errors > 0 || r.stalled
          ? ` (**${who}: ${r.errors} errors${r.firstError ? `, ${r.firstError}` : ''}${r.stalled ? ', a slice with no round trip' : ''}**)`
          : '';
      lines.push(
        `| ${config}${failed('hub', h)}${failed('baseline', b)} | ${size} B | ${kb(h.heap)} + ${kb(h.native)} = ${kb(h.heap + h.native)} | ${kb(b.heap)} + ${kb(b.native)} = ${kb(b.heap + b.native)} | ` +
          `${((h.heap + h.native) / (b.heap + b.native)).toFixed(2)} | ${slope === undefined ? '—' : slope.toFixed(2)} | ${kb(h.retained)} / ${kb(b.retained)} | ` +
          `${mib(h.rssNoGc)} / ${mib(h.rssGc)} | ${mib(b.rssNoGc)} / ${mib(b.rssGc)} |`,
      );
    }
  }
  if (streaming.length > 0) {
    lines.push(
      '',
      '| allocation per streamed delta, 1 replica | delta | hub: heap + native (B) | per delta byte | baseline: heap + native (B) | per delta byte |',
      '|---|---|---|---|---|---|',
    );
    for (const bytes of load.deltaSizes) {
      const h = streaming.find((r) => r.bytes === bytes && r.kind === 'hub');
      const b = streaming.find((r) => r.bytes === bytes && r.kind === 'baseline');
      if (!h || !b) continue;
      lines.push(
        `| streamed deltas | ${bytes} B | ${h.heap.toFixed(0)} + ${h.native.toFixed(0)} | ${((h.heap + h.native) / bytes).toFixed(1)} | ` +
          `${b.heap.toFixed(0)} + ${b.native.toFixed(0)} | ${((b.heap + b.native) / bytes).toFixed(1)} |`,
      );
    }
  }
  return lines.join('\n');
}
