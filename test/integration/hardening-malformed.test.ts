import type { Socket } from 'socket.io-client';
import { Events, Namespaces, type SendAck } from '../../src/protocol';
import type { RelayAgent } from '../../src/sdk/agent';
import { agentSocket, connected, startHub, type TestHub } from '../helpers/hub';
import { RawEngine } from '../helpers/raw-engine';
import { mintToken, TEST_AGENT_KEY } from '../helpers/tokens';
import { prng } from '../helpers/prng';

const FRAMES = 10_000;
const LANES = 16;
const JUNK_EMITS = 1_000;

const SEED = Number(process.env.FUZZ_SEED ?? 0x5eed);
const rand = prng(SEED);
const int = (n: number) => Math.floor(rand() * n);
const pick = <T>(items: readonly T[]): T => items[int(items.length)];
const randomText = (max: number) => Array.from({ length: int(max) }, () => String.fromCharCode(int(0xd800))).join('');
const randomAscii = (max: number) => Array.from({ length: int(max) }, () => String.fromCharCode(32 + int(95))).join('');

const NAMESPACES = [Namespaces.client, Namespaces.agent, '/', '/nope', '', Namespaces.client + '/x'];
const JSONISH = [
  '',
  '[',
  ']',
  '{',
  '[]',
  '{}',
  'null',
  'true',
  '0',
  '-1e999',
  '"str"',
  '["message"',
  '["message",',
  '["message",{]',
  '[null]',
  '[1,2,3]',
  '[{}]',
  '["message",null]',
  '["message",{"clientMessageId":5}]',
  '["__proto__",{}]',
  '["constructor",{"prototype":{}}]',
  '["message",{"__proto__":{"polluted":true},"clientMessageId":"p","text":"x"}]',
  '["connect"]',
  '["disconnect"]',
  '["disconnecting"]',
  '["newListener",{}]',
  '["error",{}]',
  '["message",{"clientMessageId":"x","text":"x","data":{"a":' + '['.repeat(3000),
  '[' + '"a",'.repeat(5000) + '"a"]',
  '["reply",{"to":"*","text":"x","data":[]}]',
  '["debug",{"trace":' + '['.repeat(2000) + ']'.repeat(2000) + '}]',
  '["message",{"_placeholder":true,"num":0}]',
  '["message",{"_placeholder":true,"num":99999}]',
  '["message",{"_placeholder":"x"}]',
];

/** One malformed frame: engine.io and socket.io packets that are wrong in every layer. */
function malformedFrame(): string | Buffer {
  switch (int(12)) {
    case 0:
      return randomAscii(200);
    case 1:
      return Buffer.from(Array.from({ length: int(300) }, () => int(256)));
    case 2: // an engine.io packet type with a random body (types 7–9 do not exist)
      return `${int(10)}${randomText(100)}`;
    case 3: // a socket.io packet of any type, any namespace, any body
      return `4${int(10)}${pick(NAMESPACES)},${pick(JSONISH)}`;
    case 4: // absurd ack ids
      return `42${Namespaces.client},${pick(['99999999999999999999999', '-1', '1.5', '0x10', '1e3'])}${pick(JSONISH)}`;
    case 5: // binary packets announcing attachments that never come, or far too many
      return `45${pick(['1', '0', '99999', '-1', 'x'])}-${pick(NAMESPACES)},${pick(JSONISH)}`;
    case 6: // connect attempts with junk auth
      return `40${pick(NAMESPACES)},${pick(['{"token":5}', '{"apiKey":null}', '[]', '"x"', '{', '{"token":"a.b.c","agentId":{}}'])}`;
    case 7: // events the server never accepts from peers, with valid framing
      return `42${pick(NAMESPACES)},${JSON.stringify([pick(['session', 'agent:status', 'session:closed', '', ' ', 'x'.repeat(1000)]), {}])}`;
    case 8: // valid framing, invalid payloads for real events
      return `42${Namespaces.client},${int(1000)}${JSON.stringify([pick([Events.message, Events.authRefresh]), pick([null, 1, 'x', [], { text: 1 }, { clientMessageId: '', text: '' }, { token: 7 }])])}`;
    case 9: // control characters and invalid UTF-16
      return `42${Namespaces.client},["message",{"clientMessageId":"\u0000","text":"\ud800${randomText(20)}"}]`;
    case 10: // disconnect/acks/errors for namespaces the peer never joined
      return `4${pick([1, 3, 4, 6])}${pick(NAMESPACES)},${int(5)}[]`;
    default: // engine.io upgrade/noop/close out of place
      return pick(['5', '6', '3', '2', '3probe', '5probe', '1', '4', '']);
  }
}

/** A random JSON value: wrong types, odd keys, odd strings, sometimes absurdly deep. */
function junkJson(depth = 0): unknown {
  const kind = depth > 6 ? int(5) : int(9);
  switch (kind) {
    case 0:
      return null;
    case 1:
      return pick([0, -1, 1e308, -1e-308, 2 ** 53 + 1, 0.1]);
    case 2:
      return pick(['', 'x', '\u0000', '\ud800', 'admin', '*', '__proto__', 'a'.repeat(int(3000))]);
    case 3:
      return rand() < 0.5;
    case 4:
      return randomText(30);
    case 5:
      return Array.from({ length: int(5) }, () => junkJson(depth + 1));
    case 6: {
      let deep: unknown = 1;
      for (let i = 0, n = 50 + int(3000); i < n; i++) deep = rand() < 0.5 ? [deep] : { a: deep };
      return deep;
    }
    default: {
      const keys = [
        'clientMessageId',
        'text',
        'data',
        'to',
        'trace',
        'clientId',
        'token',
        'replyTo',
        '__proto__',
        'constructor',
        randomAscii(10),
      ];
      return Object.fromEntries(Array.from({ length: int(6) }, () => [pick(keys), junkJson(depth + 1)]));
    }
  }
}

/** A well-framed socket.io event whose name and arguments are junk: it must reach the handlers and never end the connection. */
function junkEvent(nsp: string): string {
  const name = pick([
    Events.message,
    Events.authRefresh,
    Events.reply,
    Events.debug,
    'session',
    'nope',
    '',
    'x'.repeat(500),
    'constructor',
    'toString',
    'hasOwnProperty',
  ]);
  const args = Array.from({ length: int(4) }, () => junkJson());
  const ackId = rand() < 0.5 ? String(int(1_000_000)) : '';
  return `42${nsp},${ackId}${JSON.stringify([name, ...args])}`;
}

let t: TestHub;
let agent: RelayAgent;
let good: Socket[];
const goodDisconnects: string[] = [];

beforeAll(async () => {
  t = await startHub({
    MESSAGE_RATE_PER_S: '0',
    AGENT_MESSAGE_RATE_PER_S: '0',
    HANDSHAKE_FAILURES_PER_MIN: '0',
    MAX_CONNECTIONS_PER_IP: '0',
  });
  agent = await t.agent('bot');
  agent.onMessage(async (m) => {
    await agent.reply(m.from, `echo:${m.text}`);
  });
  agent.on('disconnect', (reason) => goodDisconnects.push(`agent: ${reason}`));
  good = await Promise.all([
    ...Array.from({ length: 5 }, (_, i) => t.client('bot', { sub: `good-${i}` })),
    t.client('bot', { sub: 'good-polling' }, { transports: ['polling'] }),
  ]);
  for (const s of good) s.on('disconnect', (reason) => goodDisconnects.push(`${s.id}: ${reason}`));
});
afterAll(async () => {
  const gone = [...t.hub.relay.namespaces.client.sockets.values()]
    .filter((s) => String(s.data.sub).startsWith('good-'))
    .map((s) => new Promise((r) => s.conn.once('close', r)));
  for (const s of good) s.disconnect();
  await Promise.all(gone);
  await t.close();
});

async function ackCount(result: string): Promise<number> {
  const { values } = await t.hub.metrics.acks.get();
  return values.filter((v) => v.labels.result === result).reduce((sum, v) => sum + v.value, 0);
}
const invalidAcks = () => ackCount('INVALID_PAYLOAD');

let seq = 0;
/** Every good connection relays a full round trip. */
async function allGoodConnectionsWork(): Promise<void> {
  await Promise.all(
    good.map(async (socket) => {
      const text = `ping ${++seq}`;
      const echo = new Promise<void>((resolve) => {
        const on = (m: { text: string }) => m.text === `echo:${text}` && (socket.off(Events.message, on), resolve());
        socket.on(Events.message, on);
      });
      const ack: SendAck = await socket.timeout(5000).emitWithAck(Events.message, { clientMessageId: `c-${seq}`, text });
      expect(ack.ok).toBe(true);
      await echo;
    }),
  );
}

/**
 * A parser lane: a raw engine.io websocket, usually joined with valid credentials, sends batches of
 * frames that are malformed at any layer, each followed by a probe (an event with an ack); the hub
 * may close such a connection, and the lane then opens a new one.
 */
async function parserLane(budget: Budget): Promise<void> {
  while (budget.left > 0) {
    const raw = new RawEngine(t.url);
    budget.connections++;
    try {
      await raw.opened;
    } catch {
      continue;
    }
    const asAgent = rand() < 0.3;
    const nsp = asAgent ? Namespaces.agent : Namespaces.client;
    if (rand() < 0.9) {
      const auth = asAgent
        ? { apiKey: TEST_AGENT_KEY, agentId: 'junk-bot' }
        : { token: mintToken({ sub: `fuzz-${int(50)}` }), agentId: 'bot' };
      await Promise.race([raw.join(nsp, auth), raw.closed]);
    }
    let probe = 0;
    while (raw.isOpen && budget.left > 0) {
      const batch = 1 + int(20);
      for (let i = 0; i < batch && raw.isOpen && budget.left > 0; i++) {
        raw.send(malformedFrame());
        budget.left--;
        budget.sent++;
      }
      const id = 10_000_000 + ++probe;
      raw.send(`42${nsp},${id}["${asAgent ? Events.reply : Events.message}",null]`);
      await Promise.race([raw.next((f) => f.startsWith(`43${nsp},${id}[`)), raw.closed]);
    }
    raw.close();
    await raw.closed;
  }
}

/**
 * A handler lane: one joined connection sends well-framed events with junk names and arguments.
 * Every probe must be answered and the hub must never close the connection.
 */
async function handlerLane(budget: Budget, asAgent: boolean): Promise<void> {
  const raw = new RawEngine(t.url);
  const nsp = asAgent ? Namespaces.agent : Namespaces.client;
  const auth = asAgent
    ? { apiKey: TEST_AGENT_KEY, agentId: 'junk-bot' }
    : { token: mintToken({ sub: `handler-fuzz-${int(50)}` }), agentId: 'bot' };
  expect((await raw.join(nsp, auth)).startsWith(`40${nsp},`)).toBe(true);
  let probe = 0;
  while (budget.left > 0) {
    for (let i = 0, batch = 1 + int(20); i < batch && budget.left > 0; i++) {
      raw.send(junkEvent(nsp));
      budget.left--;
      budget.sent++;
    }
    const id = 10_000_000 + ++probe;
    raw.send(`42${nsp},${id}["${asAgent ? Events.reply : Events.message}",null]`);
    const answer = await Promise.race([raw.next((f) => f.startsWith(`43${nsp},${id}[`)), raw.closed.then((code) => `closed ${code}`)]);
    expect(answer).toMatch(/^43/);
  }
  expect(raw.isOpen).toBe(true);
  raw.close();
}

interface Budget {
  left: number;
  sent: number;
  connections: number;
}

describe('malformed input', () => {
  it(`leaves the hub up with every good connection working after ${FRAMES} random malformed frames (seed ${SEED})`, async () => {
    const invalidBefore = await invalidAcks();
    const parser: Budget = { left: FRAMES / 2, sent: 0, connections: 0 };
    const handler: Budget = { left: FRAMES / 2, sent: 0, connections: LANES / 2 };
    await Promise.all([
      ...Array.from({ length: LANES / 2 }, () => parserLane(parser)),
      ...Array.from({ length: LANES / 2 }, (_, i) => handlerLane(handler, i % 3 === 0)),
    ]);
    expect(parser.sent + handler.sent).toBe(FRAMES);
    // The well-framed junk reached the event handlers and got error acks, not just the parser.
    expect((await invalidAcks()) - invalidBefore).toBeGreaterThan(FRAMES / 10);
    expect(await ackCount('SERVER_UNAVAILABLE')).toBe(0);

    expect(goodDisconnects).toEqual([]);
    expect((await fetch(`${t.url}/health/live`)).status).toBe(200);
    await allGoodConnectionsWork();
    const late = await t.client('bot', { sub: 'late' });
    late.disconnect();
  }, 120_000);

  it(`answers ${JUNK_EMITS} junk event payloads from socket.io-client with error acks or drops, never a disconnect or a server error`, async () => {
    const fuzzClient = await t.client('bot', { sub: 'junk-client' });
    const fuzzAgent = agentSocket(t.url, { apiKey: TEST_AGENT_KEY, agentId: 'junk-bot-2' });
    await connected(fuzzAgent);
    const dropped: string[] = [];
    fuzzClient.on('disconnect', (r) => dropped.push(`client: ${r}`));
    fuzzAgent.on('disconnect', (r) => dropped.push(`agent: ${r}`));

    const junkValues = (): unknown[] => [
      undefined,
      null,
      0,
      -0,
      NaN,
      1e308,
      '',
      'x'.repeat(int(2000)),
      [],
      [[[]]],
      {},
      true,
      { clientMessageId: randomAscii(80), text: randomText(50) },
      { clientMessageId: 'ok', text: 'x', data: pick([null, [], 'd', 1, { nested: { deeper: [1, { x: null }] } }]) },
      { to: pick(['', '*', 5, null, 'x'.repeat(300)]), text: pick([1, 'y', null]) },
      { trace: pick([undefined, null, { a: 1 }, 'x']), clientId: pick([undefined, 5, '', 'ok']) },
      { token: pick([5, '', 'a.b.c', null]) },
      Buffer.from(randomAscii(50)),
      { buf: Buffer.alloc(int(64)) },
      Object.assign(Object.create(null), { __proto__: { polluted: true } }),
    ];
    const events = [Events.message, Events.authRefresh, Events.reply, Events.debug, 'session', 'nope', 'hasOwnProperty', '__proto__'];

    const handled = new Map<Socket, readonly string[]>([
      [fuzzClient, [Events.message, Events.authRefresh]],
      [fuzzAgent, [Events.reply, Events.debug]],
    ]);
    const acks: Promise<unknown>[] = [];
    for (let i = 0; i < JUNK_EMITS; i++) {
      const socket = i % 2 === 0 ? fuzzClient : fuzzAgent;
      const event = pick(events);
      const args = Array.from({ length: int(4) }, () => pick(junkValues()));
      // Events the hub handles must answer every ack; the others are dropped, so nobody waits for them.
      if (handled.get(socket)!.includes(event) && rand() < 0.5) acks.push(socket.timeout(5000).emitWithAck(event, ...args));
      else socket.emit(event, ...args);
    }
    const answers = await Promise.all(acks);
    const results = new Set(answers.map((a) => ((a as SendAck).ok ? 'ok' : (a as { error: { code: string } }).error.code)));
    expect([...results].filter((r) => !['ok', 'INVALID_PAYLOAD', 'TOKEN_INVALID', 'PAYLOAD_TOO_LARGE'].includes(r))).toEqual([]);
    expect(results.has('INVALID_PAYLOAD')).toBe(true);

    // Both sockets process their events in order: one real round trip on each settles the rest.
    const clientProbe: SendAck = await fuzzClient.timeout(5000).emitWithAck(Events.message, { clientMessageId: 'probe', text: 'probe' });
    const agentProbe: SendAck = await fuzzAgent.timeout(5000).emitWithAck(Events.reply, { to: 'nobody', text: 'probe' });
    expect(clientProbe).toMatchObject({ ok: true });
    expect(agentProbe).toMatchObject({ ok: true });

    expect(dropped).toEqual([]);
    expect(goodDisconnects).toEqual([]);
    await allGoodConnectionsWork();
    fuzzClient.disconnect();
    fuzzAgent.disconnect();
  }, 60_000);

  it('finds the ack callback wherever Socket.IO puts it: alone, or after extra arguments', async () => {
    const socket = await t.client('bot', { sub: 'odd-args' });
    const invalid = { ok: false, error: { code: 'INVALID_PAYLOAD', message: expect.any(String) } };
    expect(await socket.timeout(5000).emitWithAck(Events.message)).toEqual(invalid);
    expect(await socket.timeout(5000).emitWithAck(Events.message, 'x', 'y', 'z')).toEqual(invalid);
    const ok = await socket.timeout(5000).emitWithAck(Events.message, { clientMessageId: 'extra', text: 'x' }, 'ignored');
    expect(ok).toMatchObject({ ok: true });
    socket.disconnect();
  });

  const deepCases = [
    [
      'a client message',
      Namespaces.client,
      Events.message,
      (nested: string) => `{"clientMessageId":"deep","text":"x","data":{"a":${nested}}}`,
    ],
    ['an agent reply', Namespaces.agent, Events.reply, (nested: string) => `{"to":"*","text":"x","data":{"a":${nested}}}`],
    ['an agent debug trace', Namespaces.agent, Events.debug, (nested: string) => `{"trace":${nested}}`],
  ] as const;
  const nested = (depth: number) => '['.repeat(depth) + '1' + ']'.repeat(depth);

  /** Sends one event as a raw frame (socket.io-client cannot serialize 6,000 levels either) and returns its ack. */
  async function rawAck(nsp: string, event: string, body: string): Promise<{ ok: boolean; error?: { code: string } }> {
    const raw = new RawEngine(t.url);
    const auth =
      nsp === Namespaces.client ? { token: mintToken({ sub: 'deep' }), agentId: 'bot' } : { apiKey: TEST_AGENT_KEY, agentId: 'deep-bot' };
    await raw.join(nsp, auth);
    raw.send(`42${nsp},7[${JSON.stringify(event)},${body}]`);
    const ack = await raw.next((f) => f.startsWith(`43${nsp},7[`));
    raw.close();
    return JSON.parse(ack.slice(`43${nsp},7`.length))[0];
  }

  it.each(deepCases)('answers deeply nested JSON in %s with INVALID_PAYLOAD, not a server error', async (_name, nsp, event, body) => {
    expect(await rawAck(nsp, event, body(nested(6000)))).toEqual({
      ok: false,
      error: { code: 'INVALID_PAYLOAD', message: expect.any(String) },
    });
    await allGoodConnectionsWork();
  });

  it.each(deepCases)('still accepts ordinary nesting in %s', async (_name, nsp, event, body) => {
    expect((await rawAck(nsp, event, body(nested(20)))).ok).toBe(true);
  });
});
