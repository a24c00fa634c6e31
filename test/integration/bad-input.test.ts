import WebSocket from 'ws';
import type { Socket } from 'socket.io-client';
import type { AgentInboundMessage, SendAck } from '../../src/protocol';
import type { RelayAgent } from '../../src/sdk/agent';
import { agentSocket, connected, startHub, type TestHub } from '../helpers/hub';
import { TEST_AGENT_KEY } from '../helpers/tokens';

const MAX = 1024;
let t: TestHub;
let agent: RelayAgent;
let inbox: AgentInboundMessage[];
let client: Socket;
let bystander: Socket;

beforeAll(async () => {
  t = await startHub({ MAX_MESSAGE_BYTES: String(MAX), MESSAGE_RATE_PER_S: '0' });
  agent = await t.agent('bot');
  inbox = [];
  agent.onMessage((m) => void inbox.push(m));
  client = await t.client('bot', { sub: 'fuzzer' });
  bystander = await t.client('bot', { sub: 'bystander' });
});
afterAll(() => t.close());

const ack = (socket: Socket, event: string, ...args: unknown[]): Promise<SendAck> => socket.timeout(5000).emitWithAck(event, ...args);

/** The hub still relays both ways for a connection that did nothing wrong. */
async function stillWorks(): Promise<void> {
  const res = await ack(bystander, 'message', { clientMessageId: `ok-${Math.random()}`, text: 'still there?' });
  expect(res.ok).toBe(true);
  const reply = new Promise<{ text: string }>((resolve) => bystander.once('message', resolve));
  await agent.reply('bystander', 'yes');
  expect((await reply).text).toBe('yes');
}

describe('client message validation', () => {
  it.each([
    ['a string payload', 'hello'],
    ['null', null],
    ['an array', [{ clientMessageId: 'a', text: 'b' }]],
    ['no clientMessageId', { text: 'x' }],
    ['an empty clientMessageId', { clientMessageId: '', text: 'x' }],
    ['a clientMessageId over 64 chars', { clientMessageId: 'c'.repeat(65), text: 'x' }],
    ['a numeric clientMessageId', { clientMessageId: 5, text: 'x' }],
    ['no text', { clientMessageId: 'a' }],
    ['numeric text', { clientMessageId: 'a', text: 42 }],
    ['array data', { clientMessageId: 'a', text: 'x', data: [1, 2] }],
    ['string data', { clientMessageId: 'a', text: 'x', data: 'nope' }],
    ['null data', { clientMessageId: 'a', text: 'x', data: null }],
  ])('acks INVALID_PAYLOAD for %s', async (_name, payload) => {
    expect(await ack(client, 'message', payload)).toEqual({
      ok: false,
      error: { code: 'INVALID_PAYLOAD', message: expect.any(String) },
    });
  });

  it('acks PAYLOAD_TOO_LARGE for text over MAX_MESSAGE_BYTES (counted in UTF-8 bytes)', async () => {
    const tooLong = 'é'.repeat(MAX / 2 + 1); // MAX + 2 bytes, fewer than MAX characters
    expect(await ack(client, 'message', { clientMessageId: 'big', text: tooLong })).toEqual({
      ok: false,
      error: { code: 'PAYLOAD_TOO_LARGE', message: expect.any(String) },
    });
    expect(await ack(client, 'message', { clientMessageId: 'big2', text: 'x', data: { blob: 'y'.repeat(MAX) } })).toMatchObject({
      ok: false,
      error: { code: 'PAYLOAD_TOO_LARGE' },
    });
  });

  it('delivers nothing for rejected payloads', async () => {
    await stillWorks();
    expect(inbox.every((m) => m.from === 'bystander')).toBe(true);
  });

  it('drops invalid events sent without an ack callback, and ignores unknown events', async () => {
    client.emit('message', { text: 42 });
    client.emit('no-such-event', { x: 1 }, () => {});
    client.emit('reply', { to: '*', text: 'clients cannot reply' });
    client.emit('debug', { trace: 'clients cannot trace' });
    client.emit('auth:refresh', 'not an object');
    await stillWorks();
    expect(client.connected).toBe(true);
    const dropped = await t.hub.metrics.dropped.get();
    expect(dropped.values.find((v) => v.labels.reason === 'message')?.value).toBeGreaterThanOrEqual(1);
  });
});

describe('agent reply and debug validation', () => {
  let raw: Socket;
  beforeAll(async () => {
    raw = agentSocket(t.url, { apiKey: TEST_AGENT_KEY, agentId: 'bot' });
    // A second runtime of the bot: it may be chosen for the bystander's messages, so it acks too.
    raw.on('message', (_m: unknown, done: (r: { ok: boolean }) => void) => done({ ok: true }));
    await connected(raw);
  });
  afterAll(() => raw.disconnect());

  it.each([
    ['no to', { text: 'x' }],
    ['empty to', { to: '', text: 'x' }],
    ['numeric text', { to: '*', text: 1 }],
    ['array data', { to: '*', text: 'x', data: [] }],
    ['numeric replyTo', { to: '*', text: 'x', replyTo: 3 }],
  ])('acks INVALID_PAYLOAD for a reply with %s', async (_name, payload) => {
    expect(await ack(raw, 'reply', payload)).toMatchObject({ ok: false, error: { code: 'INVALID_PAYLOAD' } });
  });

  it('acks PAYLOAD_TOO_LARGE for an oversized reply and debug trace', async () => {
    expect(await ack(raw, 'reply', { to: '*', text: 'x'.repeat(MAX + 1) })).toMatchObject({
      ok: false,
      error: { code: 'PAYLOAD_TOO_LARGE' },
    });
    expect(await ack(raw, 'debug', { trace: 'x'.repeat(MAX + 1) })).toMatchObject({ ok: false, error: { code: 'PAYLOAD_TOO_LARGE' } });
    expect(await ack(raw, 'debug', { clientId: 5, trace: 'x' })).toMatchObject({ ok: false, error: { code: 'INVALID_PAYLOAD' } });
    await stillWorks();
  });
});

describe('transport-level garbage', () => {
  it('closes only a connection that sends a frame over twice MAX_MESSAGE_BYTES', async () => {
    const victim = await t.client('bot', { sub: 'oversize' });
    const closed = new Promise<string>((resolve) => victim.on('disconnect', resolve));
    victim.emit('message', { clientMessageId: 'huge', text: 'z'.repeat(2 * MAX + 100) });
    expect(await closed).toBe('transport close');
    await stillWorks();
  });

  it('survives a flood of malformed engine.io / socket.io frames', async () => {
    const ws = new WebSocket(`${t.url.replace('http', 'ws')}/socket.io/?EIO=4&transport=websocket`);
    await new Promise((resolve) => ws.once('message', resolve)); // engine.io open packet
    const closed = new Promise((resolve) => ws.once('close', resolve));
    const garbage = ['4', '42', '42["message"', '4{}', '9', '42/ws/client,["message",{]', '\u0000\u0001', '4' + 'x'.repeat(100)];
    for (let i = 0; i < 500 && ws.readyState === WebSocket.OPEN; i++) ws.send(garbage[i % garbage.length]);
    ws.terminate();
    await closed;
    await stillWorks();
  });
});
