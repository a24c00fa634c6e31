import { io as connect, type Socket } from 'socket.io-client';
import {
  applyPartChange,
  Namespaces,
  partsOf,
  type MessageDelta,
  type MessageEnd,
  type MessagePart,
  type MessagePartEvent,
  type MessageStart,
} from '../../src/protocol';
import type { TestCluster } from './cluster';
import { mintToken } from './tokens';

/** Every event a socket receives, in order. */
export interface Recorder {
  events: { event: string; payload: unknown }[];
  of<T>(event: string): T[];
  /** Resolves with the first payload of `event` that `match` accepts, seen already or to come. */
  wait<T>(event: string, match?: (payload: T) => boolean, timeoutMs?: number): Promise<T>;
}

export function record(socket: Socket): Recorder {
  const events: Recorder['events'] = [];
  const waiters: { event: string; match: (p: unknown) => boolean; resolve: (p: unknown) => void }[] = [];
  socket.onAny((event: string, payload: unknown) => {
    events.push({ event, payload });
    for (const w of [...waiters]) {
      if (w.event === event && w.match(payload)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(payload);
      }
    }
  });
  return {
    events,
    of: <T>(event: string) => events.filter((e) => e.event === event).map((e) => e.payload as T),
    wait<T>(event: string, match: (payload: T) => boolean = () => true, timeoutMs = 10_000): Promise<T> {
      const seen = events.find((e) => e.event === event && match(e.payload as T));
      if (seen) return Promise.resolve(seen.payload as T);
      return new Promise<T>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no ${event} within ${timeoutMs} ms`)), timeoutMs);
        waiters.push({
          event,
          match: match as (p: unknown) => boolean,
          resolve: (p) => {
            clearTimeout(timer);
            resolve(p as T);
          },
        });
      });
    },
  };
}

/** What a client holds of one stream after applying what it received, by the protocol's rules. */
export interface StreamView {
  text: string;
  seq: number;
  /** Deltas whose seq was not one more than held (a gap) or not above it (a double). */
  gaps: number;
  doubles: number;
  end?: MessageEnd;
}

/** Applies a recording's stream events as a client would (docs/streaming.md). */
export function streamView(recorder: Recorder, id: string): StreamView {
  const view: StreamView = { text: '', seq: 0, gaps: 0, doubles: 0 };
  for (const { event, payload } of recorder.events) {
    const p = payload as { id?: string };
    if (p?.id !== id) continue;
    if (event === 'message:start') {
      const start = payload as MessageStart;
      if (start.seq >= view.seq) Object.assign(view, { text: start.text, seq: start.seq });
    } else if (event === 'message:delta') {
      const delta = payload as MessageDelta;
      if (delta.seq === view.seq + 1) Object.assign(view, { text: view.text + delta.text, seq: delta.seq });
      else if (delta.seq <= view.seq) view.doubles++;
      else view.gaps++;
    } else if (event === 'message:end') view.end = payload as MessageEnd;
  }
  return view;
}

/** What a client holds of one stream's parts after applying what it received (docs/parts.md). */
export interface PartsView {
  parts: MessagePart[];
  seq: number;
  gaps: number;
  doubles: number;
  end?: MessageEnd;
}

/**
 * Applies a recording's stream events to parts as a client would: a snapshot replaces what is held
 * when it is not older; a delta or part applies when its seq is one more than held; a `message:part`
 * with seq 0 (a decision on a message no longer streaming) replaces its part.
 */
export function partsView(recorder: Recorder, id: string): PartsView {
  const view: PartsView = { parts: [], seq: 0, gaps: 0, doubles: 0 };
  const next = (seq: number, apply: () => void) => {
    if (seq === view.seq + 1) {
      apply();
      view.seq = seq;
    } else if (seq <= view.seq) view.doubles++;
    else view.gaps++;
  };
  for (const { event, payload } of recorder.events) {
    if ((payload as { id?: string })?.id !== id) continue;
    if (event === 'message:start') {
      const start = payload as MessageStart;
      if (start.seq >= view.seq) Object.assign(view, { parts: partsOf(start), seq: start.seq });
    } else if (event === 'message:delta') {
      const d = payload as MessageDelta;
      next(d.seq, () => applyPartChange(view.parts, { kind: 'delta', index: d.index, text: d.text }));
    } else if (event === 'message:part') {
      const p = payload as MessagePartEvent;
      const put = () => {
        if (p.index === view.parts.length) view.parts.push(p.part);
        else view.parts[p.index] = p.part;
      };
      if (p.seq === 0) put();
      else next(p.seq, put);
    } else if (event === 'message:end') {
      view.end = payload as MessageEnd;
      view.parts = partsOf(view.end);
    }
  }
  return view;
}

export function ack<T = { ok: boolean; error?: { code: string } } & Record<string, unknown>>(
  socket: Socket,
  event: string,
  payload: unknown,
): Promise<T> {
  return socket.timeout(10_000).emitWithAck(event, payload) as Promise<T>;
}

/** A connected peer and everything it received. */
export interface Peer {
  socket: Socket;
  rec: Recorder;
}

/**
 * Runtimes and tabs of a test cluster (`clusterOf`: read when a peer connects, so it may be started
 * later, in beforeAll), on a replica's url, without reconnection (a test that drops
 * one connects a new one); every socket goes into `sockets` for the test's afterEach to close.
 */
export function streamPeers(clusterOf: () => TestCluster, sockets: Socket[]) {
  const connected = async (socket: Socket, ready: (rec: Recorder) => Promise<unknown>): Promise<Peer> => {
    sockets.push(socket);
    const rec = record(socket);
    await new Promise((resolve, reject) => {
      void ready(rec).then(resolve, reject);
      socket.once('connect_error', reject);
    });
    return { socket, rec };
  };
  return {
    /** A runtime of `agentId` that acks every message ok; `setup` adds handlers before it connects. */
    runtime(url: string, agentId: string, setup?: (socket: Socket) => void): Promise<Peer> {
      const socket = connect(`${url}${Namespaces.agent}`, {
        transports: ['websocket'],
        forceNew: true,
        reconnection: false,
        auth: { apiKey: clusterOf().handle.secrets.AGENT_API_KEYS, agentId },
      });
      socket.on('message', (_m: unknown, done: (r: unknown) => void) => done({ ok: true }));
      setup?.(socket);
      return connected(socket, () => new Promise<void>((resolve) => socket.once('connect', () => resolve())));
    },
    /** A tab of user `sub`, resolved once its session started (after its replay, with `lastMessageId`). */
    tab(url: string, agentId: string, sub: string, lastMessageId?: string): Promise<Peer> {
      const auth: Record<string, unknown> = { token: mintToken({ sub }, clusterOf().handle.secrets.JWT_SECRET), agentId };
      if (lastMessageId) auth.lastMessageId = lastMessageId;
      const socket = connect(`${url}${Namespaces.client}`, { transports: ['websocket'], forceNew: true, reconnection: false, auth });
      return connected(socket, (rec) => rec.wait('session'));
    },
  };
}

/**
 * Changes a runtime makes to the open stream `id` (started without parts) without waiting for any
 * ack, as docs/parts.md allows: per round, a tool call whose input streams and that gets its input
 * and output, a reasoning part with a delta, and a text part opened by a delta without index — each
 * change sent right after the one it builds on. Resolves with their acks, in order, and the parts
 * they make.
 */
export async function pipelinedChanges(socket: Socket, id: string, rounds: number): Promise<{ acks: unknown[]; parts: MessagePart[] }> {
  const sent: Promise<unknown>[] = [];
  const parts: MessagePart[] = [];
  const send = (event: string, payload: object) => sent.push(ack(socket, event, { id, ...payload }));
  for (let r = 0; r < rounds; r++) {
    const tool = parts.length;
    send('stream:part', { part: { type: 'tool', toolCallId: `c${r}`, toolName: 'search', state: 'input-streaming' } });
    send('stream:delta', { index: tool, text: '{"q":' });
    send('stream:delta', { index: tool, text: `"${r}"}` });
    send('stream:update', { index: tool, part: { state: 'input-available', input: { q: `${r}` } } });
    send('stream:part', { part: { type: 'reasoning', text: '' } });
    send('stream:delta', { index: tool + 1, text: `think ${r}` });
    send('stream:delta', { text: `answer ${r}` });
    send('stream:delta', { text: '.' });
    send('stream:update', { index: tool, part: { state: 'output-available', output: { hits: r } } });
    parts.push(
      {
        type: 'tool',
        toolCallId: `c${r}`,
        toolName: 'search',
        state: 'output-available',
        inputText: `{"q":"${r}"}`,
        input: { q: `${r}` },
        output: { hits: r },
      },
      { type: 'reasoning', text: `think ${r}` },
      { type: 'text', text: `answer ${r}.` },
    );
  }
  return { acks: await Promise.all(sent), parts };
}
