// One agent runtime process of a soak (forked by runtimes.ts): an agent SDK connection per bot,
// replying to every client message and broadcasting now and then, recording everything it did to a
// file of its own with synchronous writes, so a SIGKILL loses nothing recorded before it.
import { openSync, writeSync } from 'node:fs';
import { RelayAgent, RelayAgentError } from '../../src/sdk/agent';
import type { RuntimeRecord } from './records';

export interface RuntimeConfig {
  url: string;
  apiKey: string;
  bots: string[];
  /** Instance name, e.g. `rt2#3` (runtime 2, third process). */
  rt: string;
  recordFile: string;
  broadcastEveryMs: number;
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
            await new Promise((resolve) => setTimeout(resolve, 300 * attempt));
            continue;
          }
          record({ k: 'sent', rt: config.rt, bot, to, text, kind, ok: false, code, at: Date.now() });
          return;
        }
      }
    };
    agent.onMessage((m) => {
      record({ k: 'handled', rt: config.rt, bot, id: m.id, from: m.from, text: m.text, at: Date.now() });
      void send(m.from, `r:${m.text}`, 'reply', m.id);
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
