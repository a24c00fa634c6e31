// One agent runtime process of a soak (forked by runtimes.ts): an agent SDK connection per bot,
// replying to every client message and broadcasting now and then, recording everything it did to a
// file of its own with synchronous writes, so a SIGKILL loses nothing recorded before it.
import { openSync, writeSync } from 'node:fs';
import { RelayAgent, RelayAgentError } from '../../src/sdk/agent';
import type { RuntimeRecord } from './records';
import { sleep } from '../helpers/wait';

export interface RuntimeConfig {
  url: string;
  apiKey: string;
  bots: string[];
  /** Instance name, e.g. `rt2#3` (runtime 2, third process). */
  rt: string;
  recordFile: string;
  broadcastEveryMs: number;
  /** Every n-th message of a user is answered by a stream (0: none). */
  streamEvery: number;
}

const REPLY_ATTEMPTS = 4;

function main(): void {
  const config = JSON.parse(process.env.SOAK_RUNTIME ?? '') as RuntimeConfig;
  const fd = openSync(config.recordFile, 'a');
  const record = (r: RuntimeRecord) => writeSync(fd, `${JSON.stringify(r)}\n`);
  let connected = 0;
  let inFlight = 0;
  let quiet = false;
  // The end of a run: no more broadcasts, and word back once every reply under way has its outcome.
  process.on('message', () => {
    quiet = true;
    const poll = () => (inFlight === 0 ? process.send?.({ quiet: true }) : setTimeout(poll, 100));
    poll();
  });

  for (const bot of config.bots) {
    const agent = new RelayAgent({ url: config.url, apiKey: config.apiKey, agentId: bot, backoff: { baseMs: 250, capMs: 3000 } });
    agent.on('error', () => {});
    const send = async (to: string, text: string, kind: 'reply' | 'broadcast', replyTo?: string) => {
      inFlight++;
      try {
        await sendWithRetries(to, text, kind, replyTo);
      } finally {
        inFlight--;
      }
    };
    const sendWithRetries = async (to: string, text: string, kind: 'reply' | 'broadcast', replyTo?: string) => {
      for (let attempt = 1; ; attempt++) {
        try {
          const { id } = await agent.reply(to, text, undefined, replyTo);
          record({ k: 'sent', rt: config.rt, bot, to, text, kind, ok: true, id, at: Date.now() });
          return;
        } catch (err) {
          const code = err instanceof RelayAgentError ? err.code : 'NO_ACK';
          // A bot retries what the hub says may succeed later; an unanswered emit may have been logged.
          if (attempt < REPLY_ATTEMPTS && err instanceof RelayAgentError && err.retryable) {
            await sleep(300 * attempt);
            continue;
          }
          record({ k: 'sent', rt: config.rt, bot, to, text, kind, ok: false, code, at: Date.now() });
          return;
        }
      }
    };
    const streamReply = async (to: string, text: string, replyTo: string) => {
      const base = { k: 'stream' as const, rt: config.rt, bot, to, text };
      let stream;
      try {
        stream = await agent.stream(to, { replyTo });
      } catch (err) {
        record({ ...base, phase: 'start', ok: false, code: err instanceof RelayAgentError ? err.code : 'NO_ACK', at: Date.now() });
        return;
      }
      record({ ...base, phase: 'start', ok: true, id: stream.id, at: Date.now() });
      // A few words some way apart, as a model's tokens come: the stream is open for about a second.
      const words = Array.from({ length: 3 + (text.length % 4) }, (_, i) => `${text}#${i} `);
      try {
        for (const word of words) {
          await stream.write(word);
          await sleep(150 + Math.random() * 150);
        }
        await stream.end();
        record({ ...base, phase: 'end', ok: true, id: stream.id, final: words.join(''), at: Date.now() });
      } catch (err) {
        record({
          ...base,
          phase: 'end',
          ok: false,
          id: stream.id,
          code: err instanceof RelayAgentError ? err.code : String(err),
          at: Date.now(),
        });
      }
    };
    agent.onMessage((m) => {
      record({ k: 'handled', rt: config.rt, bot, id: m.id, from: m.from, text: m.text, at: Date.now() });
      // Every streamEvery-th message of a user is answered by a stream, the others by a reply.
      const n = Number(/:(\d+)$/.exec(m.text)?.[1] ?? 0);
      inFlight++;
      const answer =
        config.streamEvery > 0 && n % config.streamEvery === 0
          ? streamReply(m.from, `s:${m.text}`, m.id)
          : sendWithRetries(m.from, `r:${m.text}`, 'reply', m.id);
      void answer.finally(() => inFlight--);
    });
    let n = 0;
    const broadcast = () => {
      if (quiet) return;
      if (agent.connected) void send('*', `b:${config.rt}:${bot}:${++n}`, 'broadcast');
      setTimeout(broadcast, config.broadcastEveryMs * (0.5 + Math.random()));
    };
    setTimeout(broadcast, config.broadcastEveryMs * Math.random());
    void agent.connect().then(() => {
      if (++connected === config.bots.length) process.send?.({ ready: true });
    });
  }
}

main();
