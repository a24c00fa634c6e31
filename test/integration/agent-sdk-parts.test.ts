import { RelayAgentError, type AgentApproval, type RelayAgent } from '../../src/sdk/agent';
import { FakeAgentHub } from '../helpers/fake-agent-hub';
import { WEATHER_PARTS } from '../fixtures/answers';

/** The agent SDK's parts against a scripted Socket.IO hub (the real hub: agent-sdk-parts-hub.test.ts). */
describe('agent SDK: parts of a streamed answer', () => {
  let hub: FakeAgentHub;
  const agents: RelayAgent[] = [];
  const agent = async (options: Parameters<FakeAgentHub['agent']>[0] = {}) => {
    const a = await hub.agent(options);
    agents.push(a);
    return a;
  };

  beforeEach(async () => {
    hub = await FakeAgentHub.start();
  });
  afterEach(async () => {
    for (const a of agents.splice(0)) a.close();
    await hub.stop();
  });

  it('sends text, reasoning, a tool call and the one-shot parts in the order they were made, at the indices it counted', async () => {
    const a = await agent({ coalesceMs: 50 });
    const s = await a.stream('u1');
    await s.write('Let me ');
    const thinking = s.reasoning();
    await thinking.write('The user wants ');
    await thinking.write('the weather.');
    await s.write('check. ');
    const call = s.tool({ toolName: 'get_weather', toolCallId: 'call_1', title: 'Weather in Paris' });
    await call.writeInput('{"city":');
    await call.writeInput('"Paris"}');
    await call.inputAvailable();
    await call.output({ celsius: 21 });
    await s.write('It is 21 °C.');
    expect(await s.source({ sourceId: 's1', url: 'https://example.com/paris', title: 'Forecast' })).toBe(5);
    expect(await s.file({ url: 'https://example.com/map.png', mediaType: 'image/png' })).toBe(6);
    expect(await s.data('forecast', { days: [21, 23] }, 'f1')).toBe(7);
    expect(await s.suggest(['Tomorrow?', { text: 'In Rome', value: 'weather in Rome' }])).toBe(8);
    expect([thinking.index, call.index]).toEqual([1, 3]);
    await s.end();

    expect(hub.stream(s.id).parts).toEqual([
      ...WEATHER_PARTS,
      { type: 'suggestions', items: [{ text: 'Tomorrow?' }, { text: 'In Rome', value: 'weather in Rome' }] },
    ]);
    // Writes to one part within coalesceMs still leave as one delta, addressed by index.
    expect(hub.stream(s.id).deltas.map(({ text, index }) => ({ text, index }))).toEqual([
      { text: 'Let me ', index: undefined },
      { text: 'The user wants the weather.', index: 1 },
      { text: 'check. ', index: undefined },
      { text: '{"city":"Paris"}', index: 3 },
      { text: 'It is 21 °C.', index: undefined },
    ]);
    expect(hub.stream(s.id).changes.map((c) => ('index' in c ? c.part : c.part.type))).toEqual([
      'reasoning',
      'tool',
      { state: 'input-available', input: { city: 'Paris' } },
      { state: 'output-available', output: { celsius: 21 } },
      'source',
      'file',
      'data',
      'suggestions',
    ]);
  });

  it('asks for approval with an id of its own and hands the decision to the tool call and to onApproval once', async () => {
    const a = await agent({ coalesceMs: 0 });
    const seen: AgentApproval[] = [];
    let release!: () => void;
    const handlerDone = new Promise<void>((resolve) => (release = resolve));
    a.onApproval(async (approval) => {
      seen.push(approval);
      await handlerDone;
    });
    const s = await a.stream('u1');
    const call = s.tool({ toolName: 'refund' });
    await call.inputAvailable({ order: 42 });
    const approvalId = await call.requestApproval();
    expect(hub.stream(s.id).parts[0]).toMatchObject({ state: 'approval-requested', approval: { id: approvalId } });

    const decision = { id: approvalId, messageId: s.id, toolCallId: call.toolCallId, approved: true };
    let acked = false;
    const first = hub.approval(decision).then((ack) => {
      acked = true;
      return ack;
    });
    await expect(call.decision()).resolves.toMatchObject({ id: approvalId, approved: true });
    await hub.until(() => seen.length === 1);
    // A redelivery while the handler runs is not handed over again, and is acked with the first.
    const again = hub.approval(decision);
    await new Promise((resolve) => setImmediate(resolve));
    expect(acked).toBe(false);
    release();
    await expect(first).resolves.toEqual({ ok: true });
    await expect(again).resolves.toEqual({ ok: true });
    // And after it settled, a redelivery is acked at once.
    await expect(hub.approval(decision)).resolves.toEqual({ ok: true });
    expect(seen).toHaveLength(1);
    await call.output({ refunded: true });
    await s.end();
    expect(hub.stream(s.id).parts[0]).toMatchObject({ state: 'output-available', output: { refunded: true } });
  });

  it('sends a part right behind the text before it, without waiting for its ack (the hub keeps their order)', async () => {
    const a = await agent({ coalesceMs: 0 });
    const arrivals: string[] = [];
    hub.deltaAck = (d, seq) => {
      arrivals.push(`delta ${d.text}`);
      // Timers of one delay fire in the order set: this marks when the hub's ack goes.
      setTimeout(() => arrivals.push(`ack ${d.text}`), 500);
      return { ack: { ok: true, seq }, delayMs: 500 };
    };
    const holdPart = hub.changeAck;
    hub.changeAck = (c) => {
      arrivals.push('part' in c && !('index' in c) ? `part ${c.part.type}` : 'update');
      return holdPart(c);
    };
    const s = await a.stream('u1');
    await s.write('Let me ');
    const opened = s.source({ url: 'https://example.com' });
    await s.write('see.');
    await opened;
    await s.end();
    // The part went while the delta before it was unanswered.
    expect(arrivals.slice(0, 2)).toEqual(['delta Let me ', 'part source']);
    expect(hub.stream(s.id).parts).toEqual([
      { type: 'text', text: 'Let me ' },
      { type: 'source', sourceId: expect.any(String), url: 'https://example.com' },
      { type: 'text', text: 'see.' },
    ]);
  });

  it('refuses input that is not JSON without sending anything', async () => {
    const a = await agent({ coalesceMs: 0 });
    const s = await a.stream('u1');
    const call = s.tool({ toolName: 'search' });
    await call.writeInput('{"q": ');
    await expect(call.inputAvailable()).rejects.toMatchObject({ code: 'INVALID_PAYLOAD' });
    await s.end();
    expect(hub.stream(s.id).changes).toHaveLength(1);
    expect(hub.stream(s.id).parts[0]).toMatchObject({ state: 'input-streaming', inputText: '{"q": ' });
  });

  it('fails the stream with the code of a refused part, and still ends it', async () => {
    const a = await agent({ coalesceMs: 0 });
    hub.changeAck = (c) =>
      'part' in c && c.part.type === 'file'
        ? { ok: false, error: { code: 'INVALID_PAYLOAD', message: 'url: javascript: is not allowed' } }
        : undefined;
    const s = await a.stream('u1');
    await s.write('before');
    const refused = await s.file({ url: 'javascript:alert(1)', mediaType: 'text/html' }).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(RelayAgentError);
    expect(refused).toMatchObject({ code: 'INVALID_PAYLOAD' });
    // Later changes would address parts the hub does not hold: they are refused here with the same error.
    await expect(s.write('after')).rejects.toBe(refused);
    await expect(s.source({ url: 'https://example.com' })).rejects.toBe(refused);
    await s.end({ status: 'error' });
    expect(hub.stream(s.id).parts).toEqual([{ type: 'text', text: 'before' }]);
    expect(hub.stream(s.id).end).toEqual({ id: s.id, status: 'error' });
  });

  it('decision() without requestApproval rejects', async () => {
    const a = await agent();
    const s = await a.stream('u1');
    await expect(s.tool({ toolName: 't' }).decision()).rejects.toMatchObject({ code: 'INVALID_PAYLOAD' });
    await s.end();
  });
});
