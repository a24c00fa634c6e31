import type { Socket } from 'socket.io-client';
import type { MessageDelta, MessageEnd, MessageStart } from '../../src/protocol';

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

export function ack<T = { ok: boolean; error?: { code: string } } & Record<string, unknown>>(
  socket: Socket,
  event: string,
  payload: unknown,
): Promise<T> {
  return socket.timeout(10_000).emitWithAck(event, payload) as Promise<T>;
}
