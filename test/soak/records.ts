/**
 * What each peer of a soak run records, as plain JSON: runtimes write these as lines to a file of
 * their own (synchronously, so a SIGKILL loses nothing written before it), clients keep them in
 * memory. The checker (checker.ts) judges the run from these alone plus each client's final log.
 */

/** A runtime process's record (one JSON line each). `rt` names the runtime instance (`rt2#3`). */
export type RuntimeRecord =
  /** The agent SDK handed the handler a client message (after its own dedupe by id). */
  | { k: 'handled'; rt: string; bot: string; id: string; from: string; text: string; at: number }
  /** A reply or broadcast the runtime sent, with its outcome: `ok` with the log id, or the error code. */
  | {
      k: 'sent';
      rt: string;
      bot: string;
      to: string;
      text: string;
      kind: 'reply' | 'broadcast';
      ok: boolean;
      id?: string;
      code?: string;
      at: number;
    }
  /**
   * A streamed reply: its start (`ok` with the message id, or the error code), then its end (`ok`
   * with the final text it wrote, or the error code). A process killed mid-stream records no end.
   */
  | {
      k: 'stream';
      phase: 'start' | 'end';
      rt: string;
      bot: string;
      to: string;
      text: string;
      ok: boolean;
      id?: string;
      code?: string;
      final?: string;
      at: number;
    };

/** One send of a client: `ok` with the hub's id, an error code, or still pending when the run ended. */
export interface SendRecord {
  text: string;
  outcome: { ok: true; id: string } | { ok: false; code: string } | { pending: true };
  at: number;
  /** When its outcome came (the ack, or the error). */
  settledAt?: number;
}

/** What the hostile tenant (hostile.ts) sent, by event and outcome (`ok`, an error code, `NO_ACK`). */
export interface HostileSummary {
  bot: string;
  sinkSockets: number;
  events: Record<string, Record<string, number>>;
  startedAt: number;
  stoppedAt: number;
}

/** A message the client SDK emitted to the app (`message` event), in emission order. */
export interface Emission {
  id: string;
  author: string;
  text: string;
  /** A streamed answer starting (its final comes as a `message:end`). */
  streaming?: boolean;
  at: number;
}

/** A `message:end` the client SDK emitted: a stream's final text and status. */
export interface StreamEndSeen {
  id: string;
  text: string;
  status: string;
  at: number;
}

/** Everything one client recorded, plus its final log as read through `history()`. */
export interface ClientRecord {
  sub: string;
  bot: string;
  sends: SendRecord[];
  emissions: Emission[];
  /** Times the SDK reported `connected`, and how many of them came with `recovered: false`. */
  connects: number;
  gaps: number;
  /** Each `connected` (and each drop to `connecting`, with its code), for the post-mortem of a failed run. */
  states: { at: number; state: string; code?: string; recovered?: boolean }[];
  /**
   * Ids the app got from `history()` the way README.md's "Resuming the conversation" tells a page
   * to: on a `connected` with nothing to resume from, and on `gap`.
   */
  fromHistory: { id: string; text: string; status?: string }[];
  ends: StreamEndSeen[];
  /** The conversation log, oldest first, read page by page after the traffic stopped. */
  /** The log as history() reads it; `streaming`: a stream still open (the SDK shows the text it holds). */
  log: { id: string; author: string; text: string; status?: string; streaming?: true }[] | undefined;
  /** Streams the client saw start and not end once the run had waited for them (read with the log). */
  openAtEnd?: string[];
  /** Why the final history read failed, if it did. */
  logError?: string;
}

/** A hub process that ended without the schedule asking for it. */
export interface UnexpectedExit {
  replica: string;
  code: number | null;
  signal: string | null;
  at: number;
}

/** Samples of one replica's resident memory and open descriptors, per process instance. */
export interface ResourceSamples {
  replica: string;
  /** One entry per process start: pid, baseline at ready, peak while running, last sample. */
  instances: { pid: number; baseRss: number; baseFds: number; peakRss: number; peakFds: number; lastRss: number; lastFds: number }[];
}
