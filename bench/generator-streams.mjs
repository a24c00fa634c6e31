// The streaming commands of a load generator (bench/generator.mjs): clients that hold streamed
// answers the way the browser SDK does, and runtimes that write them, in the same process, so a
// delta's latency from the runtime's emit to the client's receipt is read on one clock.
//
//   streamClients { url, count, agentIds, secret, tag }   clients that keep one stream each
//   streamOpen {}                            each client's bot runtime opens a stream to it
//   streamClosedLoop { warmupMs, durationMs, deltaBytes? }   per stream: a delta ('token ', or
//                                            deltaBytes of text), wait for the client to get it, repeat
//   streamOpenLoop { ratePerStream, warmupMs, durationMs }   fixed offered deltas; latency percentiles
//   streamFill { deltas, bytes, timeoutMs }  every stream gets `deltas` deltas of `bytes`; until all arrived
//   streamResumeStorm { timeoutMs }          every client reconnects at once; s until each has its snapshot
//   streamEnd {}                             ends every stream
// Each takes an optional `group`, like the other commands.
import { performance } from 'node:perf_hooks';
import { io } from 'socket.io-client';

/** The commands, given the generator's shared helpers. */
/** The parts a mixed stream starts with (docs/parts.md): reasoning, a tool call streaming its input, text. */
const MIXED_PARTS = [
  { type: 'reasoning', text: '' },
  { type: 'tool', toolCallId: 'bench', toolName: 'search', state: 'input-streaming' },
  { type: 'text', text: '' },
];

/** A delta of `client`'s stream: by index in turn over its three parts when mixed, else plain text. */
function deltaOf(client, text) {
  return client.mixed ? { id: client.streamId, text, index: client.sent++ % 3 } : { id: client.streamId, text };
}

export function streamCommands({ group, socketOptions, connectOne, windowed, mint, sleep, prefix }) {
  /** A client's view of its stream: applied as the SDK does (next seq only; a snapshot replaces). */
  function watch(client) {
    const { socket } = client;
    socket.on('message:start', (m) => {
      if (m.id !== client.streamId && client.streamId !== undefined) return;
      if (m.seq >= client.seq) Object.assign(client, { seq: m.seq, text: m.text });
      client.onStart?.(m);
    });
    socket.on('message:delta', (d) => {
      if (d.id !== client.streamId) return;
      if (d.seq !== client.seq + 1) {
        client.gaps++;
        return;
      }
      client.seq = d.seq;
      if (client.keepText) client.text += d.text;
      client.onDelta?.(d);
    });
  }

  const ackOf = (socket, event, payload) =>
    new Promise((resolve, reject) => {
      socket
        .timeout(15_000)
        .emit(event, payload, (err, ack) => (err ? reject(err) : ack?.ok ? resolve(ack) : reject(new Error(ack?.error?.code))));
    });

  return {
    async streamClients({ url, count, agentIds, secret, tag, group: name, keepText = false }) {
      const g = group(name);
      g.streamClients ??= [];
      const specs = Array.from({ length: count }, (_, i) => {
        const sub = `${tag}-${prefix}-${g.streamClients.length + i}`;
        return { sub, agentId: agentIds[i % agentIds.length], token: mint(secret, sub) };
      });
      const results = await windowed(
        specs.map((spec) => () => {
          const client = { ...spec, url, seq: 0, text: '', gaps: 0, keepText, streamId: undefined };
          client.socket = io(`${url}/ws/client`, socketOptions({ token: spec.token, agentId: spec.agentId }));
          watch(client);
          return connectOne(client.socket).then(() => client);
        }),
        256,
      );
      const ok = results.filter((r) => r.ok).map((r) => r.value);
      g.streamClients.push(...ok);
      const failed = results.filter((r) => !r.ok);
      return { connected: ok.length, failed: failed.length, firstError: failed[0]?.error?.message };
    },

    async streamOpen({ group: name, mixed = false }) {
      const g = group(name);
      const runtimes = new Map(g.agents.map((socket) => [socket.agentId, socket]));
      const results = await windowed(
        g.streamClients.map((client) => async () => {
          client.runtime = runtimes.get(client.agentId);
          // Mixed: a reasoning part, a tool call whose input streams and a text part, which the deltas take in turn.
          const start = mixed ? { to: client.sub, parts: MIXED_PARTS } : { to: client.sub };
          const { id } = await ackOf(client.runtime, 'stream:start', start);
          Object.assign(client, { streamId: id, seq: 0, text: '', sent: 0, mixed });
        }),
        100,
      );
      const failed = results.filter((r) => !r.ok);
      if (failed.length > 0) throw new Error(`${failed.length} streams failed to open: ${failed[0].error?.message}`);
      return { open: g.streamClients.length };
    },

    async streamClosedLoop({ warmupMs, durationMs, group: name, deltaBytes }) {
      const clients = group(name).streamClients;
      const text = deltaBytes === undefined ? 'token ' : 'x'.repeat(deltaBytes - 1) + ' ';
      let measuring = false;
      let stopped = false;
      let completed = 0;
      let sent = 0;
      let stalls = 0;
      const send = (client) => {
        clearTimeout(client.stall);
        if (stopped) return;
        // A delta that never arrives would stop this stream's loop; count it and go on.
        client.stall = setTimeout(() => {
          stalls++;
          send(client);
        }, 5000);
        sent++;
        client.runtime.emit('stream:delta', deltaOf(client, text));
      };
      for (const client of clients) {
        client.onDelta = () => {
          if (measuring) completed++;
          send(client);
        };
        send(client);
      }
      await sleep(warmupMs);
      measuring = true;
      const t0 = performance.now();
      await sleep(durationMs);
      measuring = false;
      const elapsedMs = performance.now() - t0;
      stopped = true;
      for (const client of clients) clearTimeout(client.stall);
      // Let the last deltas land, so the next slice starts from a quiet server.
      await sleep(200);
      for (const client of clients) client.onDelta = undefined;
      return {
        completed,
        sent,
        stalls,
        elapsedMs,
        perSecond: (completed / elapsedMs) * 1000,
        gaps: clients.reduce((n, c) => n + c.gaps, 0),
      };
    },

    async streamOpenLoop({ ratePerStream, warmupMs, durationMs, group: name }) {
      const clients = group(name).streamClients;
      const latencies = [];
      let sent = 0;
      let measuredSent = 0;
      const start = performance.now();
      const measureFrom = start + warmupMs;
      const end = measureFrom + durationMs;
      for (const client of clients) {
        client.onDelta = (d) => {
          const t0 = Number(d.text);
          if (t0 >= measureFrom) latencies.push(performance.now() - t0);
        };
      }
      const ratePerS = ratePerStream * clients.length;
      let i = 0;
      await new Promise((resolve) => {
        const timer = setInterval(() => {
          const now = performance.now();
          if (now >= end) {
            clearInterval(timer);
            resolve();
            return;
          }
          const owed = Math.floor(((now - start) / 1000) * ratePerS) - sent;
          for (let n = 0; n < owed; n++) {
            const client = clients[i++ % clients.length];
            // Counted by the stamp the receiver reads: judged on the unrounded clock, a delta sent
            // within half a microsecond before measureFrom was received as measured but not sent.
            const stamp = performance.now().toFixed(3);
            if (Number(stamp) >= measureFrom) measuredSent++;
            sent++;
            client.runtime.emit('stream:delta', deltaOf(client, stamp));
          }
        }, 5);
      });
      const deadline = performance.now() + 5000;
      while (latencies.length < measuredSent && performance.now() < deadline) await sleep(50);
      for (const client of clients) client.onDelta = undefined;
      latencies.sort((a, b) => a - b);
      const pct = (q) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? Infinity;
      return {
        latencies,
        samples: latencies.length,
        sent: measuredSent,
        lost: measuredSent - latencies.length,
        offeredPerS: ratePerS,
        p50: pct(0.5),
        p99: pct(0.99),
        max: latencies.at(-1),
      };
    },

    async streamFill({ deltas, bytes, timeoutMs = 60_000, group: name }) {
      const clients = group(name).streamClients;
      const piece = 'x'.repeat(bytes - 1) + ' ';
      for (const client of clients) client.keepText = true;
      // One runtime socket carries many streams: a window keeps its write buffer from ballooning.
      await windowed(
        clients.map((client) => async () => {
          for (let n = 0; n < deltas; n++) client.runtime.emit('stream:delta', { id: client.streamId, text: piece });
          await ackOf(client.runtime, 'stream:delta', { id: client.streamId, text: piece });
        }),
        200,
      );
      const expect = deltas + 1;
      const deadline = performance.now() + timeoutMs;
      while (clients.some((c) => c.seq < expect) && performance.now() < deadline) await sleep(50);
      const behind = clients.filter((c) => c.seq < expect).length;
      if (behind > 0) throw new Error(`${behind} clients did not get every delta`);
      for (const client of clients) client.expected = { seq: expect, length: client.text.length };
      return { streams: clients.length, seq: expect, bytesEach: clients[0]?.text.length };
    },

    async streamResumeStorm({ timeoutMs, group: name }) {
      const clients = group(name).streamClients;
      let complete = 0;
      let wrong = 0;
      let refused = 0;
      const t0 = performance.now();
      let lastAt = t0;
      const done = new Promise((resolve) => {
        for (const client of clients) {
          client.socket.disconnect();
          Object.assign(client, { seq: 0, text: '' });
          client.socket = io(`${client.url}/ws/client`, socketOptions({ token: client.token, agentId: client.agentId }));
          watch(client);
          // These clients do not retry: a refused reconnect is counted, not waited for.
          client.socket.once('connect_error', () => refused++);
          client.onStart = (m) => {
            client.onStart = undefined;
            if (m.seq !== client.expected.seq || m.text.length !== client.expected.length) wrong++;
            complete++;
            lastAt = performance.now();
            if (complete === clients.length) resolve();
          };
        }
      });
      await Promise.race([done, sleep(timeoutMs)]);
      return { total: clients.length, complete, wrong, refused, seconds: (lastAt - t0) / 1000 };
    },

    async streamEnd({ group: name }) {
      const clients = group(name).streamClients ?? [];
      const results = await windowed(
        clients.filter((c) => c.streamId !== undefined).map((c) => () => ackOf(c.runtime, 'stream:end', { id: c.streamId })),
        100,
      );
      return { ended: results.filter((r) => r.ok).length, failed: results.filter((r) => !r.ok).length };
    },
  };
}
