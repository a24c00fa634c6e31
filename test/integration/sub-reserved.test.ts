import { clientSocket, connected, refusal, startHub, type TestHub } from '../helpers/hub';
import { mintToken } from '../helpers/tokens';
import { adminToken, api, apiKeyClient, bearerClient, createKey } from './rest-client.helper';

/**
 * A `sub` equal to `admin` after trimming and case-folding is reserved for ADMIN tokens: the
 * handshake and REST bearer auth answer SUB_RESERVED, minting and createUser refuse it (400).
 */
let t: TestHub;
beforeAll(async () => {
  t = await startHub({ HANDSHAKE_FAILURES_PER_MIN: '0' });
});
afterAll(() => t.close());

const LOOK_ALIKES = ['admin ', 'Admin', ' ADMIN', '\tadmin\n', 'aDmIn'];

describe('subs that read as admin are reserved', () => {
  it.each(LOOK_ALIKES)('handshake refuses sub %j without ADMIN with SUB_RESERVED', async (sub) => {
    const token = mintToken({ sub });
    expect(await refusal(clientSocket(t.url, { token, agentId: 'bot' }))).toEqual({ code: 'SUB_RESERVED', retryable: false });
  });

  it.each(LOOK_ALIKES)('REST bearer refuses sub %j without ADMIN with 401 SUB_RESERVED', async (sub) => {
    const res = await api.me({ client: bearerClient(t.url, mintToken({ sub })) });
    expect([res.response!.status, res.error]).toEqual([401, expect.objectContaining({ code: 'SUB_RESERVED' })]);
  });

  it('an ADMIN token may carry such a sub (it is routed as admin anyway)', async () => {
    (await connected(clientSocket(t.url, { token: mintToken({ sub: 'Admin', roles: ['ADMIN'] }), agentId: 'bot' }))).disconnect();
  });

  it('mintEmbedToken refuses each with 400 naming body.sub, and mints nothing', async () => {
    const minter = apiKeyClient(t.url, await createKey(t.url, ['embed:mint']));
    for (const sub of LOOK_ALIKES) {
      const res = await api.mintEmbedToken({ client: minter, body: { sub } });
      expect({ sub, status: res.response!.status, paths: res.error?.errors?.map((e) => e.path), data: res.data }).toEqual({
        sub,
        status: 400,
        paths: ['body.sub'],
        data: undefined,
      });
    }
    expect((await api.mintEmbedToken({ client: minter, body: { sub: 'administrator' } })).response!.status).toBe(201);
  });

  it('createUser refuses each as id with 400 naming body.id, and creates nobody', async () => {
    const admin = bearerClient(t.url, adminToken());
    for (const [i, id] of LOOK_ALIKES.entries()) {
      const res = await api.createUser({ client: admin, body: { id, email: `a${i}@example.com`, name: 'A' } });
      expect({ id, status: res.response!.status, paths: res.error?.errors?.map((e) => e.path) }).toEqual({
        id,
        status: 400,
        paths: ['body.id'],
      });
    }
    expect((await api.getUsers({ client: admin })).data!.meta.total).toBe(0);
  });
});
