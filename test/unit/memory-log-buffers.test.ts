import type { LoggedMessage } from '../../src/store/conversation-log';
import { MemoryConversationLog } from '../../src/store/memory/memory-conversation.store';

// A full embedded log drops its least recently used conversations as others grow: the bytes it
// allocates for that churn are the log's own share of what a relayed message costs
// (docs/benchmarks.md, "Allocation per round trip").
describe('the embedded log at its byte bound', () => {
  const message = (n: number, text: string): LoggedMessage => ({
    id: `m-${String(n).padStart(8, '0')}`,
    ts: '2026-11-26T00:00:00.000Z',
    agentId: 'bot',
    author: 'agent',
    text,
  });

  it('reuses the buffers of the conversations it drops instead of growing new ones from scratch', () => {
    const maxBytes = 2 * 2 ** 20;
    const log = new MemoryConversationLog({ maxMessages: 200, ttlS: 3600 }, { maxConversations: 10_000, maxMessages: 200_000, maxBytes });
    const text = 'x'.repeat(8 * 1024);
    let n = 0;
    // 50 conversations taking turns, 10 messages each per pass: about twice the bound.
    const pass = () => {
      for (let round = 0; round < 10; round++) for (let user = 0; user < 50; user++) log.appendNow('bot', `u${user}`, message(++n, text));
    };
    pass();
    const allocate = jest.spyOn(Buffer, 'allocUnsafeSlow');
    try {
      const before = n;
      pass();
      const appended = (n - before) * text.length;
      const allocated = allocate.mock.calls.reduce((sum, [size]) => sum + size, 0);
      // Without reuse every dropped conversation regrew its buffer by doubling: 16 MB allocated
      // for the 4 MB appended; with it, under 1 MB.
      expect(allocated).toBeLessThan(appended / 2);
    } finally {
      allocate.mockRestore();
    }
    expect(log.byteSize).toBeLessThanOrEqual(maxBytes);
    expect(log.pooledBytes).toBeLessThanOrEqual(maxBytes / 8);
  });

  it('logs a long text exactly as JSON.stringify would', async () => {
    const log = new MemoryConversationLog({ maxMessages: 10, ttlS: 3600 }, { maxConversations: 10, maxMessages: 100 });
    const texts = ['plain '.repeat(100), `${'q'.repeat(300)}"quoted"`, 'grüße 👋 '.repeat(50), 'short'];
    texts.forEach((text, i) => log.appendNow('bot', 'u', { ...message(i + 1, text), data: { text: '' } }));
    const page = await log.readBefore('bot', 'u', undefined, 10);
    expect(page.messages.map((m) => m.text)).toEqual(texts);
    expect(page.messages.map((m) => m.data)).toEqual(texts.map(() => ({ text: '' })));
  });
});
