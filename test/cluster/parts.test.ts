import { sleep, waitFor } from '../helpers/wait';
// Answers in parts across two hub processes on one real Redis (docs/parts.md): a tab moving between
// replicas mid tool-call gets the parts so far and the rest; approvals given on the other replica
// reach the bot exactly once and show on every tab, also after the stream ended and the bot's
// runtime came back elsewhere; conflicts, other users; history and REST show the parts.
import type { Socket } from 'socket.io-client';
import type {
  AgentApproval,
  ApprovalAck,
  ClientInboundMessage,
  MessageEnd,
  MessagePart,
  MessagePartEvent,
  ToolPart,
} from '../../src/protocol';
import { startTestCluster, type TestCluster } from '../helpers/cluster';
import { ack, partsView, pipelinedChanges, streamPeers, type Peer } from '../helpers/streams';
import { mintToken } from '../helpers/tokens';

let cluster: TestCluster;
let R: string[];
beforeAll(async () => {
  cluster = await startTestCluster({ STREAM_DELTA_RATE_PER_S: '5000', STREAM_DELTA_RATE_BURST: '5000' }, 2);
  R = cluster.handle.replicas.map((r) => r.url);
}, 60_000);
afterAll(() => cluster?.close(), 60_000);

const sockets: Socket[] = [];
afterEach(() => {
  for (const s of sockets.splice(0)) s.disconnect();
});

type Ack = { ok: boolean; id?: string; ts?: string; seq?: number; index?: number; error?: { code: string } };
const peers = streamPeers(() => cluster, sockets);
const { tab } = peers;

/** A runtime that acks every approval and keeps them in order. */
async function runtime(url: string, agentId: string): Promise<Peer & { approvals: AgentApproval[] }> {
  const approvals: AgentApproval[] = [];
  // Before it connects: the hub hands a runtime that connects the decisions no runtime acked yet.
  const peer = await peers.runtime(url, agentId, (socket) =>
    socket.on('approval', (a: AgentApproval, done: (r: unknown) => void) => {
      approvals.push(a);
      done({ ok: true });
    }),
  );
  return { ...peer, approvals };
}

const askTool = (approvalId: string): ToolPart => ({
  type: 'tool',
  toolCallId: `call-${approvalId}`,
  toolName: 'transfer',
  state: 'approval-requested',
  input: { amount: 10 },
  approval: { id: approvalId },
});
const approve = (c: Socket, messageId: string, approvalId: string, approved = true) =>
  ack<ApprovalAck>(c, 'approval', { messageId, approvalId, approved });

it('a tab reconnecting to the other replica mid tool-call gets the parts so far and the rest, nothing doubled or skipped', async () => {
  const rt = await runtime(R[0], 'cp-tool');
  const steady = await tab(R[1], 'cp-tool', 'u1');
  const { id } = await ack<Ack>(rt.socket, 'stream:start', { to: 'u1', parts: [{ type: 'reasoning', text: 'plan' }] });
  expect(
    await ack<Ack>(rt.socket, 'stream:part', {
      id,
      part: { type: 'tool', toolCallId: 'c1', toolName: 'search', state: 'input-streaming' },
    }),
  ).toEqual({
    ok: true,
    seq: 1,
    index: 1,
  });
  let input = '';
  let seq = 1;
  const writer = (async () => {
    for (let i = 0; i < 300; i++) {
      const piece = i === 0 ? '{"q":"' : `w${i} `;
      input += piece;
      seq++;
      // Tool input, reasoning and (later) text deltas interleave; every tenth waits for its ack.
      const payload = i % 3 === 1 ? { id, index: 0, text: ` r${i}` } : { id, index: 1, text: piece };
      if (i % 3 === 1) input = input.slice(0, -piece.length);
      if (i % 10 === 0) expect(await ack<Ack>(rt.socket, 'stream:delta', payload)).toEqual({ ok: true, seq });
      else rt.socket.emit('stream:delta', payload);
      if (i % 30 === 0) await sleep(10);
    }
  })();
  const visits: ReturnType<typeof partsView>[] = [];
  let last: Peer | undefined;
  for (let n = 0; n < 12; n++) {
    last?.socket.disconnect();
    last = await tab(R[n % 2], 'cp-tool', 'u1');
    await sleep(15);
    visits.push(partsView(last.rec, id!));
  }
  await writer;
  input += '"}';
  seq++;
  expect(await ack<Ack>(rt.socket, 'stream:delta', { id, index: 1, text: '"}' })).toEqual({ ok: true, seq });
  seq++;
  expect(await ack<Ack>(rt.socket, 'stream:update', { id, index: 1, part: { state: 'input-available', input: { q: 'x' } } })).toEqual({
    ok: true,
    seq,
  });
  seq++;
  expect(await ack<Ack>(rt.socket, 'stream:delta', { id, text: 'Done.' })).toEqual({ ok: true, seq });
  const watcher = last!;
  await watcher.rec.wait('message:delta', (d: { seq: number }) => d.seq === seq);
  const before = partsView(watcher.rec, id!);
  expect(await ack<Ack>(rt.socket, 'stream:end', { id })).toMatchObject({ ok: true });
  const end = await steady.rec.wait<MessageEnd>('message:end');
  await watcher.rec.wait<MessageEnd>('message:end');
  const tool = end.parts![1] as ToolPart;
  expect(tool).toMatchObject({ state: 'input-available', inputText: input, input: { q: 'x' } });
  expect(end.parts![2]).toEqual({ type: 'text', text: 'Done.' });
  for (const visit of visits) expect({ gaps: visit.gaps, doubles: visit.doubles }).toEqual({ gaps: 0, doubles: 0 });
  // Every visit held a prefix of the tool's input: what it had was right, whatever it had not yet.
  for (const visit of visits) expect(input.startsWith((visit.parts[1] as ToolPart | undefined)?.inputText ?? '')).toBe(true);
  // The last tab, live until the end, held exactly the final parts.
  expect(before).toMatchObject({ seq, gaps: 0, doubles: 0 });
  expect(before.parts).toEqual(end.parts);
  for (const peer of [steady, watcher]) {
    const live = partsView({ ...peer.rec, events: peer.rec.events.filter((e) => e.event !== 'message:end') }, id!);
    expect(live).toMatchObject({ parts: end.parts, gaps: 0, doubles: 0 });
  }
}, 60_000);

it('changes sent without waiting for acks are each checked against the ones before them: all recorded in order, the tab on the other replica gets them once', async () => {
  const rt = await runtime(R[0], 'cp-pipe');
  const other = await tab(R[1], 'cp-pipe', 'u1');
  const { id } = await ack<Ack>(rt.socket, 'stream:start', { to: 'u1' });
  const { acks, parts } = await pipelinedChanges(rt.socket, id!, 12);
  expect(acks).toEqual(acks.map((_, i) => expect.objectContaining({ ok: true, seq: i + 1 })));
  // A tab arriving now gets the same parts from shared state.
  const late = await tab(R[1], 'cp-pipe', 'u1');
  expect(await late.rec.wait('message:start')).toMatchObject({ id, seq: acks.length, parts });
  expect(await ack<Ack>(rt.socket, 'stream:end', { id })).toMatchObject({ ok: true });
  expect(await other.rec.wait<MessageEnd>('message:end')).toMatchObject({ id, parts });
  const live = partsView({ ...other.rec, events: other.rec.events.filter((e) => e.event !== 'message:end') }, id!);
  expect(live).toMatchObject({ parts, seq: acks.length, gaps: 0, doubles: 0 });
});

it('an approval given in a tab on the other replica reaches the bot exactly once and every tab sees it; a conflicting one gets APPROVAL_DECIDED; another user cannot decide', async () => {
  const rt = await runtime(R[0], 'cp-appr');
  const [a, b] = [await tab(R[0], 'cp-appr', 'u1'), await tab(R[1], 'cp-appr', 'u1')];
  const stranger = await tab(R[1], 'cp-appr', 'u2');
  const { id } = await ack<Ack>(rt.socket, 'stream:start', { to: 'u1' });
  expect(await ack<Ack>(rt.socket, 'stream:part', { id, part: askTool('x1') })).toMatchObject({ ok: true, seq: 1 });
  expect(await approve(stranger.socket, id!, 'x1')).toMatchObject({ ok: false, error: { code: 'MESSAGE_NOT_FOUND' } });
  // The tab on the other replica decides; then both tabs repeat it at once: one decision, one delivery.
  // A repeat that comes while the other is still delivering may be told to retry (TIMEOUT, retryable).
  expect(await approve(b.socket, id!, 'x1')).toMatchObject({ ok: true, decision: { approved: true, decidedBy: 'u1' } });
  const repeats = await Promise.all([approve(b.socket, id!, 'x1'), approve(a.socket, id!, 'x1')]);
  expect(repeats.map((r) => (r.ok ? 'ok' : r.error.code))).toEqual(['ok', 'ok']);
  for (const peer of [a, b]) {
    const shown = await peer.rec.wait<MessagePartEvent>('message:part', (p) => p.seq === 2);
    expect(shown).toMatchObject({ id, index: 0, part: { state: 'approval-responded', approval: { id: 'x1', approved: true } } });
    // The part (seq 1), then its decision once (seq 2).
    expect(peer.rec.of<MessagePartEvent>('message:part').map((p) => p.seq)).toEqual([1, 2]);
  }
  expect(await approve(a.socket, id!, 'x1', false)).toMatchObject({
    ok: false,
    error: { code: 'APPROVAL_DECIDED' },
    decision: { approved: true },
  });
  expect(rt.approvals).toEqual([expect.objectContaining({ id: 'x1', messageId: id, toolCallId: 'call-x1', from: 'u1', approved: true })]);
  expect(stranger.rec.of('message:part')).toEqual([]);
  // The runtime's replica did not record the decision; the bot's next change of the part keeps it.
  expect(await ack<Ack>(rt.socket, 'stream:update', { id, index: 0, part: { approval: { id: 'x9' } } })).toMatchObject({
    ok: false,
    error: { code: 'INVALID_PAYLOAD' },
  });
  expect(await ack<Ack>(rt.socket, 'stream:update', { id, index: 0, part: { state: 'output-available', output: 1 } })).toEqual({
    ok: true,
    seq: 3,
  });
  for (const peer of [a, b]) {
    const moved = await peer.rec.wait<MessagePartEvent>('message:part', (p) => p.seq === 3);
    expect(moved.part).toMatchObject({ state: 'output-available', output: 1, approval: { id: 'x1', approved: true, decidedBy: 'u1' } });
  }
  await ack<Ack>(rt.socket, 'stream:end', { id });
  const end = await b.rec.wait<MessageEnd>('message:end');
  expect(end.parts![0]).toMatchObject({ state: 'output-available', approval: { approved: true } });
  expect(rt.approvals).toHaveLength(1);
}, 30_000);

it('an approval given after the stream ended and the runtime reconnected on the other replica reaches it once; history and REST show the parts', async () => {
  const rt = await runtime(R[0], 'cp-late');
  const a = await tab(R[1], 'cp-late', 'u1');
  const parts: MessagePart[] = [
    { type: 'text', text: 'Transfer 10? ' },
    { type: 'source', sourceId: 's1', url: 'https://bank.example/terms' },
    askTool('x2'),
  ];
  const { id } = await ack<Ack>(rt.socket, 'stream:start', { to: 'u1', parts });
  rt.socket.disconnect();
  expect(await a.rec.wait<MessageEnd>('message:end')).toMatchObject({ id, status: 'interrupted', parts });
  const back = await runtime(R[1], 'cp-late');
  const given = await approve(a.socket, id!, 'x2');
  expect(given).toMatchObject({ ok: true });
  expect(await a.rec.wait<MessagePartEvent>('message:part')).toMatchObject({ id, seq: 0, index: 2, part: { state: 'approval-responded' } });
  expect(await approve(a.socket, id!, 'x2')).toMatchObject({ ok: true });
  expect(back.approvals).toEqual([expect.objectContaining({ id: 'x2', messageId: id, approved: true })]);
  expect(rt.approvals).toEqual([]);
  const decided = [
    ...parts.slice(0, 2),
    { ...askTool('x2'), state: 'approval-responded', approval: { id: 'x2', approved: true, decidedBy: 'u1', ts: expect.any(String) } },
  ];
  const page = await ack<{ messages: ClientInboundMessage[] }>(a.socket, 'history', {});
  expect(page.messages).toEqual([expect.objectContaining({ id, text: 'Transfer 10? ', parts: decided, status: 'interrupted' })]);
  const adminToken = mintToken({ sub: 'ops', roles: ['ADMIN'] }, cluster.handle.secrets.ADMIN_JWT_SECRET);
  const res = await fetch(`${R[0]}/agents/cp-late/conversations/u1/messages`, { headers: { authorization: `Bearer ${adminToken}` } });
  expect(res.status).toBe(200);
  expect(((await res.json()) as { data: ClientInboundMessage[] }).data).toEqual([expect.objectContaining({ id, parts: decided })]);
}, 30_000);

it('a decision made while no runtime of the bot was connected reaches the runtime that connects next, on either replica, once', async () => {
  const rt = await runtime(R[0], 'cp-offline');
  const a = await tab(R[1], 'cp-offline', 'u1');
  const reply = await ack<Ack>(rt.socket, 'reply', { to: 'u1', text: '', parts: [askTool('x3')] });
  rt.socket.disconnect();
  expect(await approve(a.socket, reply.id!, 'x3')).toMatchObject({ ok: false, error: { code: 'AGENT_OFFLINE' } });
  const back = await runtime(R[0], 'cp-offline');
  expect(await back.rec.wait<AgentApproval>('approval')).toMatchObject({ id: 'x3', messageId: reply.id, from: 'u1', approved: true });
  // Marked delivered in shared state once the runtime's ack is recorded: a repeat before that finds the
  // delivery claimed and is answered TIMEOUT (retryable), after it ok at once; a runtime on the other
  // replica gets nothing.
  const other = await runtime(R[1], 'cp-offline');
  const repeat = await waitFor(
    async () => {
      const answer = await approve(a.socket, reply.id!, 'x3');
      if (!answer.ok && answer.error.code !== 'TIMEOUT') throw new Error(`the repeat was refused: ${JSON.stringify(answer)}`);
      return answer.ok && answer;
    },
    5000,
    'the repeat acked',
  );
  expect(repeat).toMatchObject({ ok: true, decision: { approved: true } });
  expect(await ack<Ack>(other.socket, 'reply', { to: 'u1', text: 'later' })).toMatchObject({ ok: true });
  expect([...back.approvals, ...other.approvals].map((x) => x.id)).toEqual(['x3']);
});
