import { io as connect } from 'socket.io-client';
import { Namespaces } from '../../src/protocol';
import { connected, startHub, type TestHub } from '../helpers/hub';
import { RawEngine, type RawEngineOptions } from '../helpers/raw-engine';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { mintToken } from '../helpers/tokens';

// The connection limits count namespace sockets, however they share engine connections
// (docs/operations.md, slow consumers and connection limits).
const LIMIT = 100;
const CONNECTS = 250;
const ns = Namespaces.client;

interface Answers {
  accepted: number;
  refused: string[];
}

/**
 * Opens an engine connection from `from` and writes CONNECTS valid CONNECT packets to the client
 * namespace in one TCP write; resolves once each has its answer (or the hub closed the connection).
 */
async function connectBurst(t: TestHub, from: RawEngineOptions = {}): Promise<Answers & { raw: RawEngine }> {
  const raw = new RawEngine(t.url, from);
  await raw.opened;
  const frame = `40${ns},${JSON.stringify({ token: mintToken({ sub: 'burst' }), agentId: 'bot' })}`;
  raw.sendTogether(Array.from({ length: CONNECTS }, () => frame));
  const answers = () => raw.frames.filter((f) => f.startsWith(`40${ns},`) || f.startsWith(`44${ns},`));
  await Promise.race([raw.next(() => answers().length >= CONNECTS), raw.closed]);
  const all = answers();
  return {
    raw,
    accepted: all.filter((f) => f.startsWith('40')).length,
    refused: all.filter((f) => f.startsWith('44')).map((f) => (JSON.parse(f.slice(f.indexOf(',') + 1)) as { message: string }).message),
  };
}

async function refusals(t: TestHub, reason: string): Promise<number> {
  const metric = await t.hub.metrics.engineRefusals.get();
  return metric.values.find((v) => v.labels.reason === reason)?.value ?? 0;
}

/** Closes `peers` and resolves once the hub has seen every engine connection go. */
async function closeAll(t: TestHub, peers: RawEngine[]): Promise<void> {
  const conns = Object.values(
    (t.hub.io.engine as unknown as { clients: Record<string, { once(e: 'close', f: () => void): void }> }).clients,
  );
  const gone = conns.map((conn) => new Promise<void>((resolve) => conn.once('close', resolve)));
  for (const p of peers) p.close();
  await Promise.all(gone);
}

describe('CONNECT packets multiplexed on engine connections', () => {
  let t: TestHub;
  beforeAll(async () => {
    t = await startHub({ MAX_CONNECTIONS_PER_IP: String(LIMIT), MESSAGE_RATE_PER_S: '0' });
  });
  afterAll(() => t.close());

  it(`accept at most MAX_CONNECTIONS_PER_IP sockets of ${CONNECTS} written at once on one connection, and refuse the rest without a code`, async () => {
    const { raw, accepted, refused } = await connectBurst(t);
    console.log(`one engine connection, ${CONNECTS} CONNECTs in one write: ${accepted} sockets accepted, ${refused.length} refused`);
    expect(accepted).toBe(LIMIT);
    expect(refused).toEqual(Array(CONNECTS - LIMIT).fill('per-address connection limit'));
    expect(t.hub.io.of(ns).sockets.size).toBe(LIMIT);
    expect(await refusals(t, 'per-address connection limit')).toBe(CONNECTS - LIMIT);
    // The accepted sockets keep the connection; it is not dropped for the refused ones.
    expect(raw.isOpen).toBe(true);
    await closeAll(t, [raw]);
    expect(t.hub.io.of(ns).sockets.size).toBe(0);
  });

  it(`hold the limit over 20 such connections from one address, and give every slot back when they close`, async () => {
    const bursts = await Promise.all(Array.from({ length: 20 }, () => connectBurst(t)));
    const accepted = bursts.reduce((sum, b) => sum + b.accepted, 0);
    console.log(`20 engine connections × ${CONNECTS} CONNECTs: ${accepted} sockets accepted`);
    expect(accepted).toBe(LIMIT);
    expect(t.hub.io.of(ns).sockets.size).toBe(LIMIT);
    // Connections left with no namespace are closed right after their refusals.
    await Promise.all(bursts.filter((b) => b.accepted === 0).map((b) => b.raw.closed));
    await closeAll(
      t,
      bursts.map((b) => b.raw),
    );
    const again = await connectBurst(t);
    expect(again.accepted).toBe(LIMIT);
    await closeAll(t, [again.raw]);
  });
});

describe('MAX_CONNECTIONS', () => {
  it('counts the sockets of every address on one replica', async () => {
    const t = await startHub({ MAX_CONNECTIONS: String(LIMIT), MAX_CONNECTIONS_PER_IP: '0' });
    try {
      const a = await connectBurst(t, { localAddress: '127.0.0.5' });
      const b = await connectBurst(t, { localAddress: '127.0.0.6' });
      expect(a.accepted + b.accepted).toBe(LIMIT);
      expect(new Set([...a.refused, ...b.refused])).toEqual(new Set(['replica connection limit']));
      await closeAll(t, [a.raw, b.raw]);
    } finally {
      await t.close();
    }
  });
});

describe('the default namespace', () => {
  let t: TestHub;
  beforeAll(async () => {
    t = await startHub({ MAX_CONNECTIONS_PER_IP: '5', CORS_ORIGINS: 'https://good.example' });
  });
  afterAll(() => t.close());

  /** Sends a CONNECT to `/` (from any Origin); resolves with the hub's answer. */
  async function joinDefault(raw: RawEngine): Promise<string> {
    await raw.opened;
    raw.send('40');
    return raw.next((f) => f.startsWith('40{') || f.startsWith('44{'));
  }

  it('refuses every CONNECT with a connect_error, and closes the connection', async () => {
    const raw = new RawEngine(t.url, { headers: { origin: 'https://evil.example' } });
    const answer = await joinDefault(raw);
    expect(JSON.parse(answer.slice(2))).toEqual({ message: `Invalid namespace: the hub serves ${ns} and ${Namespaces.agent} only` });
    expect(await raw.closed).toBeGreaterThan(0);
    expect(t.hub.io.of('/').sockets.size).toBe(0);
    expect(await refusals(t, 'default namespace')).toBe(1);
  });

  it('cannot be used to park connections that lock a valid client of the same address out', async () => {
    const parked = Array.from({ length: 5 }, () => new RawEngine(t.url, { localAddress: '127.0.0.7' }));
    await Promise.all(parked.map((raw) => joinDefault(raw)));
    await Promise.all(parked.map((raw) => raw.closed));
    const client = connect(`${t.url}${ns}`, {
      transports: ['websocket'],
      forceNew: true,
      reconnection: false,
      auth: { token: mintToken({ sub: 'valid' }), agentId: 'bot' },
      ...({ localAddress: '127.0.0.7' } as object),
    });
    await connected(client);
    client.disconnect();
  });
});

describe('an engine connection whose namespaces all left', () => {
  it('is closed CONNECT_TIMEOUT_MS later', async () => {
    const timeoutMs = 300;
    const t = await startHub({ CONNECT_TIMEOUT_MS: String(timeoutMs) });
    try {
      const raw = new RawEngine(t.url);
      expect(await raw.join(ns, { token: mintToken({ sub: 'leaver' }), agentId: 'bot' })).toMatch(/^40/);
      const left = Date.now();
      raw.send(`41${ns},`);
      expect(await raw.closed).toBeGreaterThan(0);
      expect(Date.now() - left).toBeGreaterThanOrEqual(timeoutMs - 20);
    } finally {
      await t.close();
    }
  }, 10_000);
});

describe('two replicas over Redis', () => {
  let redis: TestRedis;
  let hubs: TestHub[] = [];
  beforeAll(async () => {
    redis = await startRedis();
    const settings = { REDIS_URL: redis.url, MAX_CONNECTIONS_PER_IP: String(LIMIT) };
    hubs = [await startHub(settings), await startHub(settings)];
  });
  afterAll(async () => {
    for (const t of hubs) await t.close();
    await redis?.close();
  });

  it('each count their own sockets against the limits (they are per replica)', async () => {
    const [a, b] = await Promise.all(hubs.map((t) => connectBurst(t)));
    expect([a.accepted, b.accepted]).toEqual([LIMIT, LIMIT]);
    expect(hubs.map((t) => t.hub.io.of(ns).sockets.size)).toEqual([LIMIT, LIMIT]);
    await closeAll(hubs[0], [a.raw]);
    await closeAll(hubs[1], [b.raw]);
  });
});
