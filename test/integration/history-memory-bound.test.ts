import type { Socket } from 'socket.io-client';
import { Events, type ClientInboundMessage, type HistoryAck, type SendAck } from '../../src/protocol';
import type { MemoryConversationLog } from '../../src/store/memory/memory-conversation.store';
import type { RelayAgent } from '../../src/sdk/agent';
import { startHub, type TestHub } from '../helpers/hub';

const MAX_BYTES = 8 * 1024 * 1024;
const BIG = 60 * 1024;
const big = (tag: string) => `${tag}:${'x'.repeat(BIG)}`;

let t: TestHub;
let agent: RelayAgent;
beforeAll(async () => {
  t = await startHub({ HISTORY_MEMORY_MAX_BYTES: String(MAX_BYTES), MESSAGE_RATE_PER_S: '0' });
  agent = await t.agent('bot');
  agent.onMessage(async (m) => {
    await agent.reply(m.from, big(`re-${m.text.slice(0, m.text.indexOf(':'))}`));
  });
});
afterAll(() => t.close());

const history = (socket: Socket): Promise<HistoryAck> => socket.timeout(5000).emitWithAck(Events.history, { limit: 100 });

async function memoryGauge(): Promise<number> {
  const metric = await t.hub.metrics.historyMemoryBytes.get();
  return metric.values[0].value;
}

describe('the embedded log bounded in bytes (HISTORY_MEMORY_MAX_BYTES)', () => {
  it('stays within the bound however much is written, dropping the least recently used conversations whole', async () => {
    const log = t.hub.store.log as MemoryConversationLog;
    // 400 conversations of one 60 KB reply each: about three times the bound in text alone.
    for (let batch = 0; batch < 400; batch += 50) {
      await Promise.all(Array.from({ length: 50 }, (_, i) => agent.reply(`gone-${batch + i}`, big(`gone-${batch + i}`))));
      expect(log.byteSize).toBeLessThanOrEqual(MAX_BYTES);
    }

    // The newest conversation, written last, is whole: its three messages and the bot's replies.
    const newest = await t.client('bot', { sub: 'newest' });
    const replies: ClientInboundMessage[] = [];
    newest.on(Events.message, (m: ClientInboundMessage) => replies.push(m));
    for (const n of [1, 2, 3]) {
      const ack: SendAck = await newest.timeout(5000).emitWithAck(Events.message, { clientMessageId: `m${n}`, text: big(`m${n}`) });
      expect(ack.ok).toBe(true);
    }
    await new Promise<void>((resolve) => {
      const check = () => replies.length === 3 && resolve();
      check();
      newest.on(Events.message, check);
    });
    const page = await history(newest);
    expect(page.ok && page.messages.map((m) => `${m.author}:${m.text.slice(0, m.text.indexOf(':'))}`)).toEqual([
      'user:m1',
      'agent:re-m1',
      'user:m2',
      'agent:re-m2',
      'user:m3',
      'agent:re-m3',
    ]);
    expect(page.ok && page.messages.every((m) => m.text.length === BIG + m.text.indexOf(':') + 1)).toBe(true);

    // The oldest conversations went whole, not message by message.
    const oldest = await t.client('bot', { sub: 'gone-0' });
    expect(await history(oldest)).toEqual({ ok: true, messages: [], hasMore: false });
    const recent = await t.client('bot', { sub: 'gone-399' });
    const kept = await history(recent);
    expect(kept.ok && kept.messages.map((m) => m.text.slice(0, 8))).toEqual(['gone-399']);

    expect(log.byteSize).toBeLessThanOrEqual(MAX_BYTES);
    const gauge = await memoryGauge();
    expect(gauge).toBe(log.byteSize);
    expect(gauge).toBeGreaterThan(MAX_BYTES / 2);
  });
});
