import type { Socket as ServerSocket } from 'socket.io';
import type { Socket } from 'socket.io-client';
import { Events, Namespaces, type SendAck } from '../../src/protocol';
import type { RelayAgent } from '../../src/sdk/agent';
import { agentSocket, connected, startHub, type TestHub } from '../helpers/hub';
import { RawEngine } from '../helpers/raw-engine';
import { mintToken, TEST_AGENT_KEY } from '../helpers/tokens';

// Frames are capped at twice MAX_MESSAGE_BYTES (docs/operations.md, "Limits"): between the two a payload gets a
// PAYLOAD_TOO_LARGE ack; beyond, the transport refuses the frame and only that connection ends.
const MAX = 1024;
const BETWEEN = 'b'.repeat(MAX + 200);
const OVER = 'o'.repeat(2 * MAX + 200);

let t: TestHub;
let agent: RelayAgent;
let bystanders: Socket[];

beforeAll(async () => {
  t = await startHub({ MAX_MESSAGE_BYTES: String(MAX), MESSAGE_RATE_PER_S: '0', HANDSHAKE_FAILURES_PER_MIN: '0' });
  agent = await t.agent('bot');
  agent.onMessage(async (m) => {
    await agent.reply(m.from, `echo:${m.text.slice(0, 40)}`);
  });
  bystanders = await Promise.all([
    t.client('bot', { sub: 'ws-bystander' }),
    t.client('bot', { sub: 'polling-bystander' }, { transports: ['polling'] }),
  ]);
});
afterAll(async () => {
  // Let polling sockets finish their goodbye requests while the hub still answers them.
  const gone = ['ws-bystander', 'polling-bystander'].map(transportGone);
  for (const s of bystanders) s.disconnect();
  await Promise.all(gone);
  await t.close();
});

let seq = 0;
const send = (socket: Socket, text: string): Promise<SendAck> =>
  socket.timeout(5000).emitWithAck(Events.message, { clientMessageId: `m-${++seq}`, text });

/** Every bystander still relays both ways, and nothing was dropped on their side. */
async function bystandersUnharmed(): Promise<void> {
  for (const socket of bystanders) {
    expect(socket.connected).toBe(true);
    const text = `still here ${++seq}`;
    const echo = new Promise<void>((resolve) => {
      const on = (m: { text: string }) => m.text === `echo:${text}` && (socket.off(Events.message, on), resolve());
      socket.on(Events.message, on);
    });
    expect((await send(socket, text)).ok).toBe(true);
    await echo;
  }
}

function hubSocket(sub: string): ServerSocket {
  const socket = [...t.hub.relay.namespaces.client.sockets.values()].find((s: ServerSocket) => s.data.sub === sub);
  if (!socket) throw new Error(`no socket of ${sub}`);
  return socket;
}

/** Resolves with the reason once the hub's socket of `sub` disconnects. */
function serverSideGone(sub: string): Promise<string> {
  return new Promise((resolve) => hubSocket(sub).once('disconnect', resolve));
}

/** Resolves once the hub has closed the whole transport of `sub` (polling ends with one more request). */
function transportGone(sub: string): Promise<void> {
  return new Promise((resolve) => hubSocket(sub).conn.once('close', () => resolve()));
}

describe.each([['websocket'], ['polling']] as const)('over %s', (transport) => {
  it('acks PAYLOAD_TOO_LARGE between MAX_MESSAGE_BYTES and the frame cap, and keeps the connection', async () => {
    const socket = await t.client('bot', { sub: `between-${transport}` }, { transports: [transport] });
    expect(await send(socket, BETWEEN)).toEqual({ ok: false, error: { code: 'PAYLOAD_TOO_LARGE', message: expect.any(String) } });
    expect((await send(socket, 'small')).ok).toBe(true);
    const gone = transportGone(`between-${transport}`);
    socket.disconnect();
    await gone;
  });

  it('closes only the connection that sends a frame over the cap', async () => {
    const sub = `over-${transport}`;
    const offender = await t.client('bot', { sub }, { transports: [transport] });
    const hubSide = serverSideGone(sub);
    const transportClosed = transportGone(sub);
    const clientSide = new Promise<string>((resolve) => offender.once('disconnect', resolve));
    offender.emit(Events.message, { clientMessageId: 'huge', text: OVER }, () => {
      throw new Error('an oversized frame must not be acked');
    });
    expect(await clientSide).toMatch(/^transport (close|error)$/);
    expect(await hubSide).toMatch(/^transport (close|error)$|^client namespace disconnect$/);
    await transportClosed;
    await bystandersUnharmed();
  });
});

describe('raw engine.io websocket', () => {
  it('gets close code 1009 (message too big) for a frame over the cap, and nothing else closes', async () => {
    const raw = new RawEngine(t.url);
    const joined = await raw.join(Namespaces.client, { token: mintToken({ sub: 'raw-over' }), agentId: 'bot' });
    expect(joined.startsWith(`40${Namespaces.client},`)).toBe(true);
    raw.send(`42${Namespaces.client},["message",{"clientMessageId":"x","text":"${OVER}"}]`);
    expect(await raw.closed).toBe(1009);
    await bystandersUnharmed();
  });

  it('applies the cap to binary frames as well', async () => {
    const raw = new RawEngine(t.url);
    await raw.join(Namespaces.client, { token: mintToken({ sub: 'raw-binary' }), agentId: 'bot' });
    raw.send(`451-${Namespaces.client},["message",{"_placeholder":true,"num":0}]`);
    raw.send(Buffer.alloc(2 * MAX + 200, 7));
    expect(await raw.closed).toBe(1009);
    await bystandersUnharmed();
  });
});

describe('agent runtimes', () => {
  it('ack PAYLOAD_TOO_LARGE for a reply between the limits, and lose only their own connection over the cap', async () => {
    const runtime = agentSocket(t.url, { apiKey: TEST_AGENT_KEY, agentId: 'big-bot' });
    await connected(runtime);
    const between: SendAck = await runtime.timeout(5000).emitWithAck(Events.reply, { to: '*', text: BETWEEN });
    expect(between).toEqual({ ok: false, error: { code: 'PAYLOAD_TOO_LARGE', message: expect.any(String) } });

    const gone = new Promise<string>((resolve) => runtime.once('disconnect', resolve));
    runtime.emit(Events.reply, { to: '*', text: OVER });
    expect(await gone).toMatch(/^transport (close|error)$/);
    expect(agent.connected).toBe(true);
    await bystandersUnharmed();
  });
});
