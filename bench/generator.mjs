// A load generator process, driven by bench/run.mjs over IPC. It speaks the hub's wire protocol,
// which the baseline mirrors, so both servers see exactly the same traffic: agent runtimes that
// ack every message and reply with its text, and browser-like clients (websocket transport,
// forceNew, like the SDKs) that send `message` with an ack and wait for the reply.
//
// Commands (each answered with { id, result } or { id, error }):
//   agents { url, agentIds, apiKey }                 one runtime per agentId, echoing
//   clients { url, count, agentIds, secret, tag, reconnection?, window?, localAddresses?, timeoutMs? }
//                                                    connect and keep (source addresses round robin,
//                                                    e.g. 127.0.0.2 …: ~28,000 ephemeral ports each;
//                                                    timeoutMs: the connect timeout, default 20 s)
//   closedLoop { warmupMs, durationMs, payloadBytes? }   every client: send, wait for the reply, repeat
//                                                    (payloadBytes: each message's text padded to
//                                                    that many bytes; the runtimes echo it whole)
//   openLoop { ratePerS, warmupMs, durationMs }      fixed offered load; RTT percentiles
//   handshakes { url, count, concurrency, agentId, secret }   connect + disconnect, as fast as possible
//   storm { timeoutMs }                              drop every client's TCP connection at once
//   recoverySetup { url, count, agentIds, secret, tag }   clients that keep the last id they saw
//   replyTo { clients: [{ sub, agentId }], times }   this generator's runtimes reply to each client
//   recoveryLeave {}                                 once each recovery client saw a message, disconnect
//   recoveryStorm { expect, timeoutMs }              all reconnect at once with lastMessageId; s until
//                                                    every one has `expect` new messages
//   count {}                                         client sockets still connected
//   closeAll {}                                      disconnect everything
//   stream…                                          streamed replies: bench/generator-streams.mjs
// Every command but closeAll takes an optional `group`: sockets are kept per group.
import { performance } from 'node:perf_hooks';
import jwt from 'jsonwebtoken';
import { io } from 'socket.io-client';
import { streamCommands } from './generator-streams.mjs';

/** Sockets by group (one group per server under test, so both can be driven alternately). */
const groups = new Map();
const group = (name = 'default') => {
  if (!groups.has(name)) groups.set(name, { agents: [], clients: [] });
  return groups.get(name);
};
let seq = 0;
const prefix = `${process.pid}`;

const mint = (secret, sub) => jwt.sign({ sub, exp: Math.floor(Date.now() / 1000) + 3600 }, secret, { algorithm: 'HS256' });

function socketOptions(auth, reconnection = false, localAddress = undefined, timeout = undefined) {
  return {
    transports: ['websocket'],
    forceNew: true,
    reconnection,
    auth,
    ...(localAddress ? { localAddress } : {}),
    ...(timeout ? { timeout } : {}),
  };
}

function connectOne(socket) {
  return new Promise((resolve, reject) => {
    socket.once('connect', () => resolve(socket));
    socket.once('connect_error', (err) => reject(err));
  });
}

/** Runs `tasks` (functions returning promises) with at most `window` in flight. */
async function windowed(tasks, window) {
  const results = new Array(tasks.length);
  let next = 0;
  const worker = async () => {
    while (next < tasks.length) {
      const i = next++;
      results[i] = await tasks[i]().then(
        (value) => ({ ok: true, value }),
        (error) => ({ ok: false, error }),
      );
    }
  };
  await Promise.all(Array.from({ length: Math.min(window, tasks.length) }, worker));
  return results;
}

const commands = {
  async agents({ url, agentIds, apiKey, group: name }) {
    const { agents } = group(name);
    const made = await Promise.all(
      agentIds.map((agentId) => {
        const socket = io(`${url}/ws/agent`, socketOptions({ apiKey, agentId }));
        socket.agentId = agentId;
        socket.on('message', (message, ack) => {
          if (typeof ack === 'function') ack({ ok: true });
          socket.emit('reply', { to: message.from, text: message.text }, () => {});
        });
        return connectOne(socket);
      }),
    );
    agents.push(...made);
    return { connected: made.length };
  },

  async clients({ url, count, agentIds, secret, tag, reconnection = false, window = 256, group: name, localAddresses = [], timeoutMs }) {
    const { clients } = group(name);
    // Tokens first, so minting never overlaps a measurement.
    const specs = Array.from({ length: count }, (_, i) => {
      const sub = `${tag}-${prefix}-${clients.length + i}`;
      const localAddress = localAddresses.length > 0 ? localAddresses[i % localAddresses.length] : undefined;
      return { sub, agentId: agentIds[i % agentIds.length], token: mint(secret, sub), localAddress };
    });
    const t0 = performance.now();
    const results = await windowed(
      specs.map((spec) => () => {
        const auth = { token: spec.token, agentId: spec.agentId, sub: spec.sub };
        const socket = io(`${url}/ws/client`, socketOptions(auth, reconnection, spec.localAddress, timeoutMs));
        const client = { socket, pending: new Map() };
        socket.on('message', (message) => {
          const key = roundTripKey(message.text);
          const waiter = client.pending.get(key);
          if (waiter) {
            client.pending.delete(key);
            waiter(null);
          }
        });
        return connectOne(socket).then(() => client);
      }),
      window,
    );
    const ok = results.filter((r) => r.ok).map((r) => r.value);
    clients.push(...ok);
    const failed = results.filter((r) => !r.ok);
    const elapsedMs = performance.now() - t0;
    return { connected: ok.length, failed: failed.length, firstError: failed[0]?.error?.message, elapsedMs };
  },

  async closedLoop({ warmupMs, durationMs, group: name, payloadBytes = 0 }) {
    const { clients } = group(name);
    const fill = 'x'.repeat(payloadBytes);
    let measuring = false;
    let stopped = false;
    let completed = 0;
    let errors = 0;
    let firstError;
    let total = 0;
    const loops = clients.map(async (client) => {
      while (!stopped) {
        const outcome = await roundTrip(client, fill);
        total++;
        if (!measuring) continue;
        if (outcome === 'ok') completed++;
        else {
          errors++;
          firstError ??= outcome;
        }
      }
    });
    await sleep(warmupMs);
    measuring = true;
    const t0 = performance.now();
    await sleep(durationMs);
    measuring = false;
    const elapsedMs = performance.now() - t0;
    stopped = true;
    await Promise.all(loops);
    return { completed, total, errors, firstError, elapsedMs, perSecond: (completed / elapsedMs) * 1000 };
  },

  async openLoop({ ratePerS, warmupMs, durationMs, group: name }) {
    const { clients } = group(name);
    const latencies = [];
    let sent = 0;
    let errors = 0;
    const inFlight = new Set();
    const start = performance.now();
    const measureFrom = start + warmupMs;
    const end = measureFrom + durationMs;
    let i = 0;
    // A 5 ms tick sends whatever the schedule owes, round robin over the clients.
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
          const t0 = performance.now();
          const measured = t0 >= measureFrom;
          sent++;
          const p = roundTrip(client).then((outcome) => {
            inFlight.delete(p);
            if (!measured) return;
            if (outcome === 'ok') latencies.push(performance.now() - t0);
            else errors++;
          });
          inFlight.add(p);
        }
      }, 5);
    });
    await Promise.race([Promise.all(inFlight), sleep(5000)]);
    latencies.sort((a, b) => a - b);
    const pct = (q) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))];
    return { latencies, samples: latencies.length, errors, lost: inFlight.size, p50: pct(0.5), p99: pct(0.99), max: latencies.at(-1) };
  },

  async handshakes({ url, count, concurrency, agentId, secret }) {
    const specs = Array.from({ length: count }, (_, i) => {
      const sub = `hs-${prefix}-${i}`;
      return { sub, token: mint(secret, sub) };
    });
    const t0 = performance.now();
    const results = await windowed(
      specs.map((spec) => async () => {
        const socket = io(`${url}/ws/client`, socketOptions({ token: spec.token, agentId, sub: spec.sub }));
        try {
          await connectOne(socket);
        } finally {
          socket.disconnect();
        }
      }),
      concurrency,
    );
    const elapsedMs = performance.now() - t0;
    const ok = results.filter((r) => r.ok).length;
    return { ok, failed: count - ok, elapsedMs, perSecond: (ok / elapsedMs) * 1000 };
  },

  async storm({ timeoutMs, group: name }) {
    const { clients } = group(name);
    const total = clients.length;
    let back = 0;
    const t0 = performance.now();
    let lastAt = t0;
    const done = new Promise((resolve) => {
      for (const { socket } of clients) {
        // Back means the namespace handshake (JWT verification on the hub) succeeded again.
        socket.once('connect', () => {
          back++;
          lastAt = performance.now();
          if (back === total) resolve();
        });
      }
    });
    // An abrupt drop: the TCP connection goes without a close frame, as when a load balancer or a
    // network path fails; every client notices at once and reconnects with its own backoff.
    for (const { socket } of clients) socket.io.engine.transport.ws.terminate();
    await Promise.race([done, sleep(timeoutMs)]);
    return { total, back, seconds: (lastAt - t0) / 1000 };
  },

  /** How many client sockets are still connected (over all groups). */
  async count() {
    let connected = 0;
    for (const { clients } of groups.values()) for (const { socket } of clients) if (socket.connected) connected++;
    return { connected };
  },

  async recoverySetup({ url, count, agentIds, secret, tag, group: name }) {
    const g = group(name);
    g.recovery = { url, clients: [] };
    const specs = Array.from({ length: count }, (_, i) => {
      const sub = `${tag}-${prefix}-${i}`;
      return { sub, agentId: agentIds[i % agentIds.length], token: mint(secret, sub), lastId: undefined, seen: [] };
    });
    const results = await windowed(
      specs.map((spec) => () => {
        spec.socket = io(`${url}/ws/client`, socketOptions({ token: spec.token, agentId: spec.agentId }));
        spec.socket.on('message', (m) => {
          spec.lastId = m.id;
        });
        return connectOne(spec.socket);
      }),
      256,
    );
    const failed = results.filter((r) => !r.ok).length;
    if (failed > 0) throw new Error(`${failed} recovery clients failed to connect`);
    g.recovery.clients = specs;
    return { clients: specs.map(({ sub, agentId }) => ({ sub, agentId })) };
  },

  async replyTo({ clients, times, group: name }) {
    const byAgent = new Map(group(name).agents.map((socket) => [socket.agentId, socket]));
    const tasks = [];
    for (let t = 0; t < times; t++) {
      for (const { sub, agentId } of clients) {
        tasks.push(
          () =>
            new Promise((resolve, reject) =>
              byAgent
                .get(agentId)
                .emit('reply', { to: sub, text: `missed ${t}` }, (ack) => (ack?.ok ? resolve() : reject(new Error(ack?.error?.code)))),
            ),
        );
      }
    }
    // One reply to a client at a time, in order: a window over the clients, then the next round.
    let errors = 0;
    for (let t = 0; t < times; t++) {
      const round = tasks.slice(t * clients.length, (t + 1) * clients.length);
      errors += (await windowed(round, 500)).filter((r) => !r.ok).length;
    }
    return { sent: tasks.length, errors };
  },

  async recoveryLeave({ group: name, timeoutMs = 30_000 }) {
    const { clients } = group(name).recovery;
    const deadline = Date.now() + timeoutMs;
    while (clients.some((c) => c.lastId === undefined)) {
      if (Date.now() > deadline) throw new Error('not every recovery client saw its first reply');
      await sleep(50);
    }
    for (const c of clients) c.socket.disconnect();
    return { left: clients.length };
  },

  async recoveryStorm({ expect, timeoutMs, group: name }) {
    const { url, clients } = group(name).recovery;
    let complete = 0;
    let notRecovered = 0;
    let doubled = 0;
    const t0 = performance.now();
    let lastAt = t0;
    const done = new Promise((resolve) => {
      for (const c of clients) {
        const socket = io(`${url}/ws/client`, socketOptions({ token: c.token, agentId: c.agentId, lastMessageId: c.lastId }));
        c.socket = socket;
        const ids = new Set();
        socket.on('session', (s) => {
          if (s.recovered !== true) notRecovered++;
        });
        socket.on('message', (m) => {
          if (ids.has(m.id)) doubled++;
          ids.add(m.id);
          if (ids.size !== expect) return;
          complete++;
          lastAt = performance.now();
          if (complete === clients.length) resolve();
        });
      }
    });
    await Promise.race([done, sleep(timeoutMs)]);
    return { total: clients.length, complete, notRecovered, doubled, seconds: (lastAt - t0) / 1000 };
  },

  async closeAll() {
    let closed = 0;
    for (const { agents, clients, recovery, streamClients } of groups.values()) {
      for (const { socket } of [...clients, ...(recovery?.clients ?? []), ...(streamClients ?? [])]) socket?.disconnect();
      for (const socket of agents) socket.disconnect();
      closed += clients.length + agents.length;
    }
    groups.clear();
    return { closed };
  },
};

Object.assign(commands, streamCommands({ group, socketOptions, connectOne, windowed, mint, sleep, prefix }));

/** A round trip's key: its text up to the first space (the padding follows it). */
function roundTripKey(text) {
  const space = text.indexOf(' ');
  return space < 0 ? text : text.slice(0, space);
}

/**
 * Sends one message and resolves 'ok' once its reply arrived (or the error ack, or a timeout).
 * With `fill` (a string of the payload's size) the text is the key, a space, then padding up to
 * `fill.length` bytes.
 */
function roundTrip(client, fill = '') {
  const key = `${prefix}:${++seq}`;
  const text = fill.length > key.length + 1 ? `${key} ${fill.slice(key.length + 1)}` : key;
  return new Promise((resolve) => {
    const timer = setTimeout(() => finish('timeout'), 15_000);
    function finish(outcome) {
      clearTimeout(timer);
      client.pending.delete(key);
      resolve(outcome);
    }
    client.pending.set(key, () => finish('ok'));
    client.socket.emit('message', { clientMessageId: key, text }, (ack) => {
      if (!ack?.ok) finish(ack?.error?.code ?? 'error');
    });
  });
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

process.on('message', async ({ id, cmd, args }) => {
  try {
    process.send({ id, result: await commands[cmd](args ?? {}) });
  } catch (err) {
    process.send({ id, error: err instanceof Error ? err.stack : String(err) });
  }
});
process.on('disconnect', () => process.exit(0));
