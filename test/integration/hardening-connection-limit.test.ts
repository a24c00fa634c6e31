import { get } from 'node:http';
import { startHub, type TestHub } from '../helpers/hub';
import { RawEngine, type RawEngineOptions } from '../helpers/raw-engine';

const PER_IP = 3;

/** The hub's open engine.io connections (a protected field of engine.io's server). */
function engineConnections(t: TestHub): { once(event: 'close', fn: () => void): void }[] {
  return Object.values((t.hub.io.engine as unknown as { clients: Record<string, { once(event: 'close', fn: () => void): void }> }).clients);
}

/** Resolves when the hub has seen the next engine connection close. */
function nextServerClose(t: TestHub): Promise<void> {
  const conns = engineConnections(t);
  return new Promise((resolve) => {
    for (const conn of conns) conn.once('close', () => resolve());
  });
}

async function openAll(t: TestHub, count: number, from: RawEngineOptions): Promise<{ open: RawEngine[]; refused: string[] }> {
  const peers = Array.from({ length: count }, () => new RawEngine(t.url, from));
  const results = await Promise.allSettled(peers.map((p) => p.opened));
  const open = peers.filter((_, i) => results[i].status === 'fulfilled');
  const refused = results.flatMap((r) => (r.status === 'rejected' ? [(r.reason as Error).message] : []));
  return { open, refused };
}

describe.each([
  [
    'behind a proxy (TRUST_PROXY=true, X-Forwarded-For)',
    { TRUST_PROXY: 'true' },
    { headers: { 'x-forwarded-for': '203.0.113.7' } },
    { headers: { 'x-forwarded-for': '198.51.100.9' } },
  ],
  ['on raw peer addresses (TRUST_PROXY=false)', {}, { localAddress: '127.0.0.3' }, { localAddress: '127.0.0.4' }],
] as const)('per-address connection limit %s', (_name, settings, capped, other) => {
  let t: TestHub;
  beforeAll(async () => {
    t = await startHub({ ...settings, MAX_CONNECTIONS_PER_IP: String(PER_IP), HANDSHAKE_FAILURES_PER_MIN: '0' });
  });
  afterAll(() => t.close());

  let held: RawEngine[] = [];
  afterEach(async () => {
    // Wait until the hub itself has let go, so the next test starts with every slot free.
    const gone = engineConnections(t).map((conn) => new Promise<void>((resolve) => conn.once('close', resolve)));
    for (const p of held) p.close();
    held = [];
    await Promise.all(gone);
  });

  it('refuses the websocket upgrade itself (no 101) beyond the limit, even when all arrive at once', async () => {
    const { open, refused } = await openAll(t, 20, capped);
    held.push(...open);
    expect(open).toHaveLength(PER_IP);
    expect(refused).toHaveLength(20 - PER_IP);
    // engine.io answers every refused upgrade with a plain 400 carrying the reason.
    expect(new Set(refused)).toEqual(new Set(['upgrade refused: HTTP 400 per-address connection limit']));
  });

  it('still admits another address while one is at its limit', async () => {
    held.push(...(await openAll(t, PER_IP, capped)).open);
    const { open } = await openAll(t, PER_IP, other);
    held.push(...open);
    expect(open).toHaveLength(PER_IP);
  });

  it('frees a slot when a connection closes', async () => {
    const { open } = await openAll(t, PER_IP, capped);
    held.push(...open);
    await expect(new RawEngine(t.url, capped).opened).rejects.toThrow('per-address connection limit');
    const gone = nextServerClose(t);
    open[0].close();
    await gone;
    const again = new RawEngine(t.url, capped);
    held.push(again);
    await again.opened;
  });

  it('refuses polling handshakes too (HTTP 403, no handshake code: SDKs retry those with backoff)', async () => {
    held.push(...(await openAll(t, PER_IP, capped)).open);
    const res = await pollingHandshake(t.url, capped);
    expect(res).toEqual({ status: 403, body: { code: 4, message: 'per-address connection limit' } });
    expect(t.hub.io.engine.clientsCount).toBe(PER_IP);
  });
});

/** The first request of a polling session, sent from `from`. */
function pollingHandshake(url: string, from: RawEngineOptions): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    const req = get(`${url}/socket.io/?EIO=4&transport=polling`, { headers: from.headers, localAddress: from.localAddress }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(body) }));
    });
    req.on('error', reject);
  });
}

describe('per-replica connection limit', () => {
  it('refuses upgrades beyond MAX_CONNECTIONS, whatever the address', async () => {
    const t = await startHub({ MAX_CONNECTIONS: '4', MAX_CONNECTIONS_PER_IP: '0' });
    const held: RawEngine[] = [];
    try {
      const a = await openAll(t, 3, { localAddress: '127.0.0.5' });
      const b = await openAll(t, 3, { localAddress: '127.0.0.6' });
      held.push(...a.open, ...b.open);
      expect(a.open.length + b.open.length).toBe(4);
      const metrics = await t.hub.metrics.engineRefusals.get();
      expect(metrics.values.find((v) => v.labels.reason === 'replica connection limit')?.value).toBe(2);
    } finally {
      for (const p of held) p.close();
      await t.close();
    }
  });
});

describe('connectTimeout', () => {
  it('closes a transport that never joins a namespace', async () => {
    const t = await startHub({ CONNECT_TIMEOUT_MS: '200' });
    try {
      const idle = new RawEngine(t.url);
      await idle.opened;
      expect(await idle.closed).toBeGreaterThan(0);
      expect(idle.frames.filter((f) => !f.startsWith('0{') && f !== '2')).toEqual([]);
    } finally {
      await t.close();
    }
  });
});
