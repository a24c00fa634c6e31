import type { ConfigKey } from '../../src/config/config';
import { startHub, type TestHub } from '../helpers/hub';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { adminToken, api, bearerClient } from './rest-client.helper';

/**
 * Paging numbers out of range are 400 VALIDATION_FAILED on every paginated route and on both
 * stores (a page of 1e20 was a 500 with Redis and an empty 200 in memory); the largest page
 * allowed still answers, and nothing was created or changed by the refusals.
 */
const LISTS = ['/users', '/api-keys', '/agents', '/agents/bot/conversations/u1/messages'];
const MAX_PAGE = 10_000_000;
const OUT_OF_RANGE = ['1e20', '100000000000000000000', String(2 ** 53 + 2), String(MAX_PAGE + 1), '1e400', 'Infinity', '-1e20'];

function pagingBounds(hub: () => TestHub): void {
  const get = (path: string, query: string) =>
    fetch(`${hub().url}${path}?${query}`, { headers: { authorization: `Bearer ${adminToken()}` } });

  it.each(LISTS)('%s: 400 VALIDATION_FAILED for page out of range, naming query.page', async (path) => {
    for (const page of OUT_OF_RANGE) {
      const res = await get(path, `page=${page}`);
      const body = (await res.json()) as { code?: string; errors?: { path: string }[] };
      expect({
        page,
        status: res.status,
        type: res.headers.get('content-type'),
        code: body.code,
        paths: body.errors?.map((e) => e.path),
      }).toEqual({
        page,
        status: 400,
        type: expect.stringMatching(/^application\/problem\+json/),
        code: 'VALIDATION_FAILED',
        paths: ['query.page'],
      });
    }
    const perPage = await get(path, 'perPage=1e20');
    expect(perPage.status).toBe(400);
  });

  it.each(LISTS)('%s: the largest page answers 200 with an empty page', async (path) => {
    const res = await get(path, `page=${MAX_PAGE}&perPage=100`);
    const body = (await res.json()) as { data: unknown[]; meta: { currentPage: number } };
    expect([res.status, body.data, body.meta.currentPage]).toEqual([200, [], MAX_PAGE]);
  });

  it('the refusals changed nothing: the one user is still listed on page 1', async () => {
    const admin = bearerClient(hub().url, adminToken());
    expect((await api.createUser({ client: admin, body: { id: 'kept', email: 'kept@example.com', name: 'Kept' } })).response!.status).toBe(
      201,
    );
    for (const page of OUT_OF_RANGE) expect((await get('/users', `page=${page}`)).status).toBe(400);
    const listed = await api.getUsers({ client: admin });
    expect(listed.data!.data.map((u) => u.id)).toEqual(['kept']);
  });
}

describe('REST paging bounds (memory store)', () => {
  let h: TestHub;
  beforeAll(async () => {
    h = await startHub();
  });
  afterAll(() => h.close());
  pagingBounds(() => h);
});

describe('REST paging bounds (Redis store)', () => {
  let redis: TestRedis;
  let h: TestHub;
  beforeAll(async () => {
    redis = await startRedis();
    h = await startHub({ REDIS_URL: redis.url } satisfies Partial<Record<ConfigKey, string>>);
  });
  afterAll(async () => {
    await h?.close();
    await redis?.close();
  });
  pagingBounds(() => h);
});
