import { clientSocket, connected, refusal, startHub, type TestHub } from '../helpers/hub';
import { mintToken } from '../helpers/tokens';
import { adminToken, api, apiKeyClient, bearerClient, createKey } from './rest-client.helper';

/**
 * A `sub` that reads as `admin` (after Unicode normalization, case folding, removing control and
 * invisible characters, and mapping look-alike letters) is reserved for ADMIN tokens: the handshake
 * and REST bearer auth answer SUB_RESERVED, minting and createUser refuse it (400).
 */
let t: TestHub;
beforeAll(async () => {
  t = await startHub({ HANDSHAKE_FAILURES_PER_MIN: '0' });
});
afterAll(() => t.close());

const LOOK_ALIKES = [
  'admin ',
  'Admin',
  ' ADMIN',
  '\tadmin\n',
  'aDmIn',
  // Found by a probe: each was accepted, minted and passed to bots as `from`.
  '\u0430dmin', // Cyrillic a
  'admin\u0000',
  'admin\u200b', // zero-width space
  '\uff41\uff44\uff4d\uff49\uff4e', // fullwidth
  'ADM\u0130N', // capital I with dot above
  // And their kin: invisible joiners and marks, other scripts' look-alikes, compatibility forms.
  'ad\u00admin', // soft hyphen
  '\u2060admin\ufeff',
  'adm\u0131n', // dotless i
  'adm\u0456n', // Cyrillic i
  '\u0430\u0501\u043c\u0456\u0578', // Cyrillic and Armenian throughout
  'a\u0307dmin', // a combining mark
  '\ud835\udc1a\ud835\udc1d\ud835\udc26\ud835\udc22\ud835\udc27', // mathematical bold
  '\u24d0\u24d3\u24dc\u24d8\u24dd', // circled
];
/** Ordinary subjects, non-ASCII ones included, keep working. */
const ORDINARY = ['jos\u00e9', '\u0141ukasz', '\u5f20\u4f1f', 'administrator', 'admins', 'dmin', '\u0430\u0434\u043c\u0438\u043d'];

describe('subs that read as admin are reserved', () => {
  it.each(LOOK_ALIKES)('handshake refuses sub %j without ADMIN with SUB_RESERVED', async (sub) => {
    const token = mintToken({ sub });
    expect(await refusal(clientSocket(t.url, { token, agentId: 'bot' }))).toEqual({ code: 'SUB_RESERVED', retryable: false });
  });

  it.each(LOOK_ALIKES)('REST bearer refuses sub %j without ADMIN with 401 SUB_RESERVED', async (sub) => {
    const res = await api.me({ client: bearerClient(t.url, mintToken({ sub })) });
    expect([res.response!.status, res.error]).toEqual([401, expect.objectContaining({ code: 'SUB_RESERVED' })]);
  });

  it.each(ORDINARY)('handshake and minting accept the ordinary sub %j', async (sub) => {
    (await connected(clientSocket(t.url, { token: mintToken({ sub }), agentId: 'bot' }))).disconnect();
    const minter = apiKeyClient(t.url, await createKey(t.url, ['embed:mint']));
    const res = await api.mintEmbedToken({ client: minter, body: { sub } });
    expect(res.response!.status).toBe(201);
    (await connected(clientSocket(t.url, { token: res.data!.data.token, agentId: 'bot' }))).disconnect();
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
