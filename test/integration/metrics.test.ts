import type { Socket } from 'socket.io-client';
import { Events, Namespaces, type SendAck } from '../../src/protocol';
import type { RelayAgent } from '../../src/sdk/agent';
import { clientSocket, refusal, startHub, type TestHub } from '../helpers/hub';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { mintToken } from '../helpers/tokens';

/** One scrape of /metrics, parsed from the Prometheus text format. */
class Scrape {
  private constructor(
    readonly text: string,
    private readonly samples: Map<string, number>,
  ) {}

  static async of(url: string): Promise<Scrape> {
    const res = await fetch(`${url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    const samples = new Map<string, number>();
    for (const line of text.split('\n')) {
      if (line === '' || line.startsWith('#')) continue;
      const cut = line.lastIndexOf(' ');
      samples.set(canonical(line.slice(0, cut)), Number(line.slice(cut + 1)));
    }
    return new Scrape(text, samples);
  }

  /** The sample's value; 0 for a labelled series that has not been observed yet. */
  value(name: string, labels: Record<string, string> = {}): number {
    return this.samples.get(canonical(seriesKey(name, labels))) ?? 0;
  }

  has(name: string): boolean {
    return this.text.includes(`# TYPE ${name} `);
  }
}

function seriesKey(name: string, labels: Record<string, string>): string {
  const entries = Object.entries(labels);
  return entries.length === 0 ? name : `${name}{${entries.map(([k, v]) => `${k}="${v}"`).join(',')}}`;
}

/** Label order does not matter: sort them. */
function canonical(series: string): string {
  const open = series.indexOf('{');
  if (open < 0) return series;
  const labels = series.slice(open + 1, -1).match(/[a-zA-Z_]\w*="(?:[^"\\]|\\.)*"/g) ?? [];
  return `${series.slice(0, open)}{${labels.sort().join(',')}}`;
}

let t: TestHub;
let agent: RelayAgent;
beforeAll(async () => {
  t = await startHub({ HANDSHAKE_FAILURES_PER_MIN: '0', MESSAGE_RATE_PER_S: '1', MESSAGE_RATE_BURST: '5' });
  agent = await t.agent('bot');
  agent.onMessage(async (m) => {
    await agent.reply(m.from, 'pong');
  });
});
afterAll(() => t.close());

describe('/metrics', () => {
  it('exposes every relay metric and the process metrics, event-loop lag included', async () => {
    const scrape = await Scrape.of(t.url);
    for (const name of [
      'relay_connections',
      'relay_handshakes_total',
      'relay_engine_refusals_total',
      'relay_messages_total',
      'relay_acks_total',
      'relay_redis_errors_total',
      'relay_dropped_events_total',
      'nodejs_eventloop_lag_seconds',
      'nodejs_eventloop_lag_p99_seconds',
      'process_resident_memory_bytes',
    ]) {
      expect({ name, exposed: scrape.has(name) }).toEqual({ name, exposed: true });
    }
    expect(scrape.value('nodejs_eventloop_lag_seconds')).toBeGreaterThanOrEqual(0);
    expect(scrape.value('relay_connections', { namespace: Namespaces.agent })).toBe(1);
  });

  it('moves with connections, handshakes, relayed messages and acks', async () => {
    const before = await Scrape.of(t.url);
    const client = await t.client('bot', { sub: 'metered' });
    expect(await refusal(clientSocket(t.url, { token: 'nope', agentId: 'bot' }))).toMatchObject({ code: 'TOKEN_INVALID' });
    expect(await refusal(clientSocket(t.url, { token: mintToken({ sub: 'x', expiresIn: -60 }), agentId: 'bot' }))).toMatchObject({
      code: 'TOKEN_EXPIRED',
    });

    const pong = new Promise((resolve) => client.once(Events.message, resolve));
    const ok: SendAck = await client.timeout(5000).emitWithAck(Events.message, { clientMessageId: 'm1', text: 'ping' });
    expect(ok.ok).toBe(true);
    await pong;
    const invalid: SendAck = await client.timeout(5000).emitWithAck(Events.message, { text: 42 });
    expect(invalid).toMatchObject({ ok: false, error: { code: 'INVALID_PAYLOAD' } });
    const limited = await flood(client, 7); // 3 tokens left: 4 refusals, under the 5 that disconnect
    expect(limited).toBeGreaterThan(0);

    const during = await Scrape.of(t.url);
    const delta = (name: string, labels: Record<string, string> = {}) => during.value(name, labels) - before.value(name, labels);
    expect(delta('relay_connections', { namespace: Namespaces.client })).toBe(1);
    expect(delta('relay_handshakes_total', { namespace: Namespaces.client, result: 'accepted', code: '' })).toBe(1);
    expect(delta('relay_handshakes_total', { namespace: Namespaces.client, result: 'rejected', code: 'TOKEN_INVALID' })).toBe(1);
    expect(delta('relay_handshakes_total', { namespace: Namespaces.client, result: 'rejected', code: 'TOKEN_EXPIRED' })).toBe(1);
    expect(delta('relay_messages_total', { direction: 'client_to_agent' })).toBeGreaterThanOrEqual(1);
    expect(delta('relay_messages_total', { direction: 'agent_to_client' })).toBeGreaterThanOrEqual(1);
    expect(delta('relay_acks_total', { event: Events.message, result: 'ok' })).toBeGreaterThanOrEqual(1);
    expect(delta('relay_acks_total', { event: Events.reply, result: 'ok' })).toBeGreaterThanOrEqual(1);
    expect(delta('relay_acks_total', { event: Events.message, result: 'INVALID_PAYLOAD' })).toBe(1);
    expect(delta('relay_acks_total', { event: Events.message, result: 'RATE_LIMITED' })).toBe(limited);

    const gone = new Promise((resolve) => [...t.hub.relay.namespaces.client.sockets.values()][0].once('disconnect', resolve));
    client.disconnect();
    await gone;
    const after = await Scrape.of(t.url);
    expect(after.value('relay_connections', { namespace: Namespaces.client })).toBe(
      before.value('relay_connections', { namespace: Namespaces.client }),
    );
  });

  it('counts connections refused before the handshake by reason', async () => {
    const h = await startHub({ MAX_CONNECTIONS: '1' });
    try {
      const first = await h.client('bot', { sub: 'first' });
      const second = clientSocket(h.url, { token: mintToken({ sub: 'second' }), agentId: 'bot' });
      await new Promise((resolve) => {
        second.once('connect_error', resolve);
        second.connect();
      });
      second.disconnect();
      expect((await Scrape.of(h.url)).value('relay_engine_refusals_total', { reason: 'replica connection limit' })).toBe(1);
      first.disconnect();
    } finally {
      await h.close();
    }
  });
});

describe('/metrics in cluster mode', () => {
  let redis: TestRedis;
  let h: TestHub;
  beforeAll(async () => {
    redis = await startRedis();
    h = await startHub({ REDIS_URL: redis.url });
  });
  afterAll(async () => {
    await h?.close();
    await redis?.close();
  });

  it('counts Redis errors by component', async () => {
    const before = await Scrape.of(h.url);
    await redis.stop();
    try {
      // The failure limiter asks Redis on every handshake and counts the error before answering.
      expect((await refusal(clientSocket(h.url, { token: 'nope', agentId: 'bot' }))).code).toBe('TOKEN_INVALID');
      const after = await Scrape.of(h.url);
      const labels = { component: 'auth-failure-limiter' };
      expect(after.value('relay_redis_errors_total', labels) - before.value('relay_redis_errors_total', labels)).toBeGreaterThan(0);
    } finally {
      await redis.start();
    }
  });
});

describe('/metrics with METRICS_TOKEN', () => {
  const token = 'm'.repeat(40);
  let h: TestHub;
  beforeAll(async () => {
    h = await startHub({ METRICS_TOKEN: token });
  });
  afterAll(() => h.close());

  it.each([
    ['no credentials', undefined],
    ['a wrong token', `Bearer ${'x'.repeat(40)}`],
    ['a token of another length', 'Bearer short'],
    ['another scheme', `Basic ${token}`],
  ])('refuses %s with a 401 problem', async (_what, authorization) => {
    const res = await fetch(`${h.url}/metrics`, authorization ? { headers: { authorization } } : {});
    expect(res.status).toBe(401);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(await res.json()).toMatchObject({ status: 401, code: 'METRICS_TOKEN_REQUIRED' });
  });

  it('serves the scrape to the bearer of the token', async () => {
    const res = await fetch(`${h.url}/metrics`, { headers: { authorization: `Bearer ${token}` } });
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('# TYPE relay_connections gauge');
  });
});

/** Sends `count` messages past the bucket at once; resolves with the number of RATE_LIMITED acks. */
async function flood(socket: Socket, count: number): Promise<number> {
  const acks: SendAck[] = await Promise.all(
    Array.from({ length: count }, (_, i) => socket.timeout(5000).emitWithAck(Events.message, { clientMessageId: `f${i}`, text: 'f' })),
  );
  return acks.filter((a) => !a.ok && a.error.code === 'RATE_LIMITED').length;
}
