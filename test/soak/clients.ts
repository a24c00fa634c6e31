import { prng } from '../helpers/prng';
import { mintToken } from '../helpers/tokens';
import { RelayChat, RelayChatError, type BackoffOptions, type ClientInboundMessage } from '../../sdk/browser/src';
import type { ClientRecord } from './records';
import { sleep } from '../helpers/wait';

export interface ClientPoolOptions {
  url: string;
  jwtSecret: string;
  count: number;
  bots: string[];
  /** Each client sends one message per this period (jittered); 0 = none. */
  sendEveryMs: number;
  ackTimeoutMs: number;
  backoff?: BackoffOptions;
}

interface Client {
  chat: RelayChat;
  record: ClientRecord;
  sent: number;
  pending: Set<Promise<void>>;
  /** Streams seen start and not yet end. */
  open: Set<string>;
}

export interface ClientPool {
  /** Starts the steady traffic (each client on its own jittered timer). */
  startTraffic(): void;
  /** Stops sending; resolves when every send has settled (ok, refused, or timed out in the SDK). */
  stopTraffic(timeoutMs: number): Promise<number>;
  /** Cuts the connections of `count` clients at once (chosen by `seed`), as a network drop would. */
  dropConnections(count: number, seed: number): number;
  /** Clients connected now. */
  connected(): number;
  /** Waits until every client is connected, then reads each one's whole log through `history()`. */
  loadLogs(timeoutMs: number): Promise<void>;
  /** Streams a client has seen start and not end, over all clients. */
  openStreams(): number;
  records(): ClientRecord[];
  close(): void;
}

/** `count` chats on the embed SDK's logic (Node, socket.io-client), recording what each sent and was shown. */
export async function startClients(options: ClientPoolOptions): Promise<ClientPool> {
  const clients: Client[] = [];
  for (let i = 0; i < options.count; i++) {
    const sub = `u${i}`;
    const bot = options.bots[i % options.bots.length];
    const chat = new RelayChat({
      url: options.url,
      agentId: bot,
      token: () => Promise.resolve(mintToken({ sub }, options.jwtSecret)),
      ackTimeoutMs: options.ackTimeoutMs,
      persist: false,
      ...(options.backoff ? { backoff: options.backoff } : {}),
    });
    const record: ClientRecord = {
      sub,
      bot,
      sends: [],
      emissions: [],
      connects: 0,
      gaps: 0,
      fromHistory: [],
      ends: [],
      states: [],
      log: undefined,
    };
    chat.on('error', () => {});
    const open = new Set<string>();
    chat.on('message', (m) => {
      const streaming = 'streaming' in m && m.streaming === true;
      if (streaming) open.add(m.id);
      record.emissions.push({ id: m.id, author: m.author, text: m.text, ...(streaming ? { streaming } : {}), at: Date.now() });
    });
    chat.on('message:end', (m) => {
      open.delete(m.id);
      record.ends.push({ id: m.id, text: m.text, status: m.status, at: Date.now() });
    });
    // README.md's page: load history on a connect with nothing to resume from and after a gap; a
    // load that fails (the connection dropped again) is done on the next connect.
    let needsHistory = false;
    const loadHistory = () => {
      chat.history({ limit: 100 }).then(
        (page) => {
          needsHistory = false;
          for (const m of page.messages) {
            const status = (m as { status?: unknown }).status;
            record.fromHistory.push({ id: m.id, text: m.text, ...(typeof status === 'string' ? { status } : {}) });
          }
        },
        () => {},
      );
    };
    chat.on('state', ({ state, recovered, code }) => {
      record.states.push({ at: Date.now(), state, ...(code ? { code } : {}), ...(recovered === undefined ? {} : { recovered }) });
      if (state !== 'connected') return;
      record.connects++;
      if (recovered === undefined) needsHistory = true;
      if (needsHistory) loadHistory();
    });
    chat.on('gap', () => {
      record.gaps++;
      needsHistory = true;
      loadHistory();
    });
    clients.push({ chat, record, sent: 0, pending: new Set(), open });
  }
  await waitUntil(() => clients.every((c) => c.chat.state === 'connected'), 60_000, 'every client connected');

  let sending = false;
  const timers = new Set<NodeJS.Timeout>();
  const send = (c: Client) => {
    const text = `m:${c.record.sub}:${++c.sent}`;
    const entry: ClientRecord['sends'][number] = { text, outcome: { pending: true }, at: Date.now() };
    c.record.sends.push(entry);
    const p = c.chat.send(text).then(
      ({ id }) => void Object.assign(entry, { outcome: { ok: true, id }, settledAt: Date.now() }),
      (err: unknown) =>
        void Object.assign(entry, {
          outcome: { ok: false, code: err instanceof RelayChatError ? err.code : String(err) },
          settledAt: Date.now(),
        }),
    );
    c.pending.add(p);
    void p.finally(() => c.pending.delete(p));
  };
  const schedule = (c: Client, delay: number) => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      if (!sending) return;
      send(c);
      schedule(c, options.sendEveryMs * (0.5 + Math.random()));
    }, delay);
    timers.add(timer);
  };

  return {
    startTraffic() {
      if (options.sendEveryMs <= 0) return;
      sending = true;
      for (const c of clients) schedule(c, Math.random() * options.sendEveryMs);
    },
    async stopTraffic(timeoutMs) {
      sending = false;
      timers.forEach(clearTimeout);
      timers.clear();
      const all = clients.flatMap((c) => [...c.pending]);
      await Promise.race([Promise.all(all), sleep(timeoutMs)]);
      return clients.reduce((n, c) => n + c.pending.size, 0);
    },
    dropConnections(count, seed) {
      const random = prng(seed);
      const picked = new Set<Client>();
      while (picked.size < Math.min(count, clients.length)) picked.add(clients[Math.floor(random() * clients.length)]);
      let dropped = 0;
      for (const c of picked) if (cutConnection(c.chat)) dropped++;
      return dropped;
    },
    connected: () => clients.filter((c) => c.chat.state === 'connected').length,
    async loadLogs(timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      const queue = [...clients];
      const worker = async () => {
        for (let c = queue.shift(); c; c = queue.shift()) {
          try {
            c.record.openAtEnd = [...c.open];
            c.record.log = await readLog(c.chat, deadline);
          } catch (err) {
            c.record.logError = err instanceof Error ? `${(err as RelayChatError).code ?? ''} ${err.message}` : String(err);
          }
        }
      };
      await Promise.all(Array.from({ length: 10 }, worker));
    },
    openStreams: () => clients.reduce((n, c) => n + c.open.size, 0),
    records: () => clients.map((c) => c.record),
    close() {
      sending = false;
      timers.forEach(clearTimeout);
      for (const c of clients) c.chat.close();
    },
  };
}

/**
 * Ends the chat's current connection abruptly from the client side (the websocket's TCP socket is
 * destroyed, no close frame), so the SDK goes through its reconnect: backoff, resend, replay.
 */
function cutConnection(chat: RelayChat): boolean {
  const socket = (chat as unknown as { socket?: { io?: { engine?: { transport?: { ws?: { terminate?: () => void } }; close(): void } } } })
    .socket;
  const engine = socket?.io?.engine;
  if (!engine) return false;
  if (typeof engine.transport?.ws?.terminate === 'function') engine.transport.ws.terminate();
  else engine.close();
  return true;
}

/** The whole conversation as the client can read it, oldest first; retried while the chat reconnects. */
async function readLog(chat: RelayChat, deadline: number): Promise<NonNullable<ClientRecord['log']>> {
  for (;;) {
    try {
      await waitUntil(() => chat.state === 'connected', Math.max(0, deadline - Date.now()), 'connected');
      const pages: ClientInboundMessage[][] = [];
      let before: string | undefined;
      for (;;) {
        const page = await chat.history({ limit: 100, ...(before ? { before } : {}) });
        pages.unshift(page.messages);
        if (!page.hasMore || page.messages.length === 0) break;
        before = page.messages[0].id;
      }
      return pages.flat().map((m) => {
        // Streamed replies carry their status (streaming, complete, …) once streams are in the protocol.
        const { status, streaming } = m as unknown as { status?: unknown; streaming?: unknown };
        return {
          id: m.id,
          author: m.author,
          text: m.text,
          ...(typeof status === 'string' ? { status } : {}),
          ...(streaming === true ? { streaming: true as const } : {}),
        };
      });
    } catch (err) {
      // NOT_CONNECTED, TIMEOUT, RATE_LIMITED, SERVER_UNAVAILABLE: a fault may still be settling.
      if (Date.now() > deadline) throw err;
      await sleep(250);
    }
  }
}

async function waitUntil(condition: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(100);
  }
}
