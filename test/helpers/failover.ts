import type { AgentInboundMessage, ClientInboundMessage } from '../../src/protocol';
import type { RelayAgent } from '../../src/sdk/agent';
import { RelayChat } from '../../sdk/browser/src';
import { waitFor } from './wait';
import { clientSocket, connected, type TestHub } from './hub';
import { mintToken } from './tokens';

// What the Redis failover tests (test/cluster/cluster-failover.test.ts, sentinel-failover.test.ts)
// set up and watch on two replicas: the bot on one, a user's tab on the other.

/** How long after the new master is seen the replicas may take to serve again. */
export const RECOVERY_BOUND_MS = 15_000;

/** A bot on `a` echoing each message (replies acked noted) and a tab of `user` on `b` that has seen one reply. */
export async function botAndTab(a: TestHub, b: TestHub, bot: string, user: string) {
  const agent: RelayAgent = await a.agent(bot);
  const seenByBot: string[] = [];
  const repliesAcked: string[] = [];
  agent.onMessage(async (m: AgentInboundMessage) => {
    seenByBot.push(m.text);
    await agent.reply(m.from, `echo:${m.text}`, undefined, m.id).then(
      () => void repliesAcked.push(`echo:${m.text}`),
      () => {},
    );
  });
  const chat = new RelayChat({
    url: b.url,
    agentId: bot,
    token: () => Promise.resolve(mintToken({ sub: user })),
    persist: false,
    backoff: { baseMs: 100, capMs: 500 },
    ackTimeoutMs: 10_000,
  });
  chat.on('error', () => {});
  const shown: string[] = [];
  chat.on('message', (m: ClientInboundMessage) => shown.push(m.text));
  const states: { at: number; state: string; code?: string }[] = [];
  chat.on('state', (s: { state: string; code?: string }) => states.push({ at: Date.now(), ...s }));
  await waitFor(() => chat.state === 'connected', 10_000, 'chat connected');
  await chat.send('before');
  await waitFor(() => shown.includes('echo:before'), 10_000, 'the first reply');
  return { agent, chat, seenByBot, repliesAcked, shown, states };
}

/** Whether a fresh client handshake on `hub` is accepted; the code of a refusal goes to `refusals`. */
export async function acceptsHandshake(hub: TestHub, bot: string, refusals: string[]): Promise<boolean> {
  const socket = clientSocket(hub.url, { token: mintToken({ sub: 'probe' }), agentId: bot });
  try {
    await connected(socket);
    return true;
  } catch (err) {
    refusals.push((err as { data?: { code?: string } }).data?.code ?? (err as Error).message);
    return false;
  } finally {
    socket.disconnect();
  }
}

/** A hub's warnings and errors (its JSON log lines), one line each: time, message, error. */
export function warnings(lines: string[]): string[] {
  return lines
    .map((l) => JSON.parse(l) as { level: number; time: string; msg: string; err?: { message: string } })
    .filter((l) => l.level >= 40)
    .map((l) => `${l.time} ${l.msg}${l.err ? ` (${l.err.message})` : ''}`);
}
