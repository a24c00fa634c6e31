// The hostile tenant of a soak (forked by main.ts; docs/soak.md): a bot of its own whose runtime
// floods what a bot may send, with the bot's own "users" as targets: replies to junk clientIds
// nobody holds, streams to junk users (opened, filled, ended, again), and activity and deltas to one
// junk user holding many sockets, where each event costs a delivery per socket, and broadcasts to them. It keeps its
// runtime socket's own rates (AGENT_MESSAGE_RATE_PER_S, STREAM_DELTA_RATE_PER_S), so only the
// bot's delivery budget stands between it and the replica. It counts every outcome and writes the
// counts to its summary file each second (synchronously: a SIGKILL keeps the last).
import { writeFileSync } from 'node:fs';
import { io, type Socket } from 'socket.io-client';
import { mintToken } from '../helpers/tokens';
import { Events, Namespaces } from '../../src/protocol';
import type { HostileSummary } from './records';

export interface HostileConfig {
  url: string;
  /** The nginx path prefix is the url's; sockets go to `${url}${namespace}`. */
  apiKey: string;
  jwtSecret: string;
  bot: string;
  summaryFile: string;
  /** Sockets of the junk user that activity and one stream's deltas go to. */
  sinkSockets: number;
}

const TICK_MS = 20;
/** Per tick: 300 activities/s, 150 replies/s, 50 broadcasts/s, 150 deltas/s (under 2,000 events and 200 deltas a second per socket). */
const ACTIVITIES = 6;
const REPLIES = 3;
const DELTAS = 3;
const REPLY_TEXT = 'j'.repeat(2048);
const DELTA_TEXT = 'k'.repeat(1024);
const OPEN_STREAMS = 20;
const DELTAS_PER_STREAM = 16;

type Ack = { ok: true; id?: string } | { ok: false; error: { code: string } };

function main(): void {
  const config = JSON.parse(process.env.SOAK_HOSTILE ?? '') as HostileConfig;
  const summary: HostileSummary = { bot: config.bot, sinkSockets: config.sinkSockets, events: {}, startedAt: 0, stoppedAt: 0 };
  const count = (event: string, ack: Ack | undefined) => {
    const outcome = ack === undefined ? 'NO_ACK' : ack.ok ? 'ok' : ack.error.code;
    const byOutcome = (summary.events[event] ??= {});
    byOutcome[outcome] = (byOutcome[outcome] ?? 0) + 1;
  };
  const save = () => writeFileSync(config.summaryFile, JSON.stringify(summary));
  const saver = setInterval(save, 1000);

  const sinks: Socket[] = [];
  for (let i = 0; i < config.sinkSockets; i++) {
    const token = mintToken({ sub: 'hostile-sink' }, config.jwtSecret);
    sinks.push(io(`${config.url}${Namespaces.client}`, { transports: ['websocket'], auth: { token, agentId: config.bot } }));
  }
  const runtime: Socket = io(`${config.url}${Namespaces.agent}`, {
    transports: ['websocket'],
    auth: { apiKey: config.apiKey, agentId: config.bot },
    reconnectionDelay: 250,
    reconnectionDelayMax: 2000,
  });
  const emit = (event: string, payload: unknown, then?: (ack: Ack | undefined) => void) =>
    runtime.timeout(10_000).emit(event, payload, (err: Error | null, ack?: Ack) => {
      count(event, err ? undefined : ack);
      then?.(err ? undefined : ack);
    });

  /** Open streams to junk users, with the deltas each has had; a throttled one is ended. */
  const streams = new Map<string, number>();
  let junk = 0;
  let flooding = false;
  const startStream = (to: string) =>
    emit(Events.streamStart, { to }, (ack) => {
      if (ack?.ok && ack.id) streams.set(ack.id, 0);
    });
  const tick = () => {
    if (!flooding || !runtime.connected) return;
    for (let i = 0; i < ACTIVITIES; i++) emit(Events.activity, { to: 'hostile-sink', state: 'typing' });
    for (let i = 0; i < REPLIES; i++) emit(Events.reply, { to: `junk-${++junk}`, text: REPLY_TEXT });
    // To all its bot's users: the junk user's sockets on every replica.
    emit(Events.reply, { to: '*', text: REPLY_TEXT });
    if (streams.size < OPEN_STREAMS) startStream(streams.size % 4 === 0 ? 'hostile-sink' : `junk-stream-${++junk}`);
    let sent = 0;
    for (const [id, deltas] of streams) {
      if (sent++ >= DELTAS) break;
      streams.delete(id);
      if (deltas >= DELTAS_PER_STREAM) {
        emit(Events.streamEnd, { id });
        continue;
      }
      emit(Events.streamDelta, { id, text: DELTA_TEXT }, (ack) => {
        if (ack?.ok) streams.set(id, deltas + 1);
        else if (ack && !ack.ok && ack.error.code === 'RATE_LIMITED') emit(Events.streamEnd, { id });
      });
    }
  };
  const timer = setInterval(tick, TICK_MS);
  runtime.on('connect', () => {
    streams.clear();
    if (!flooding) {
      flooding = true;
      summary.startedAt = Date.now();
      process.send?.({ ready: true });
    }
  });
  // The end of a run: the flood stops, the counts are written, and word goes back.
  process.on('message', () => {
    flooding = false;
    clearInterval(timer);
    clearInterval(saver);
    summary.stoppedAt = Date.now();
    save();
    runtime.disconnect();
    for (const s of sinks) s.disconnect();
    process.send?.({ quiet: true });
  });
}

main();
