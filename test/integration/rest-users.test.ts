import type { Socket } from 'socket.io-client';
import { clientSocket, nextEvent, refusal, startHub, type TestHub } from '../helpers/hub';
import { mintToken } from '../helpers/tokens';
import { adminToken, anonymousClient, api, bearerClient } from './rest-client.helper';
import type { Client } from '../../src/client/client';

describe('REST users (generated client, live hub)', () => {
  let h: TestHub;
  let admin: Client;
  beforeEach(async () => {
    h = await startHub();
    admin = bearerClient(h.url, adminToken());
  });
  afterEach(() => h.close());

  const create = (body: api.CreateUserDto, client = admin) => api.createUser({ client, body });

  it('creates a user: 201 with the item in SingleModel, undeclared properties stripped', async () => {
    const res = await create({
      id: 'u1',
      email: 'Ann@example.com',
      name: 'Ann',
      phone: '+1 555',
      role: 'ADMIN',
      deactivated: true,
    } as api.CreateUserDto);
    expect(res.response!.status).toBe(201);
    expect(res.data).toEqual({
      success: true,
      data: {
        id: 'u1',
        email: 'Ann@example.com',
        name: 'Ann',
        phone: '+1 555',
        deactivated: false,
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      },
    });
    expect(new Date(res.data!.data.createdAt).toISOString()).toBe(res.data!.data.createdAt);
    const got = await api.getUserById({ client: admin, path: { id: 'u1' } });
    expect(got.response!.status).toBe(200);
    expect(got.data!.data).not.toHaveProperty('role');
    expect(got.data!.data.deactivated).toBe(false);
  });

  it('generates an id when none is given', async () => {
    const res = await create({ email: 'gen@example.com', name: 'Gen' });
    expect(res.response!.status).toBe(201);
    expect(res.data!.data.id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('answers 409 for a duplicate id and for a duplicate email in any case', async () => {
    await create({ id: 'u1', email: 'ann@example.com', name: 'Ann' });
    const dupId = await create({ id: 'u1', email: 'other@example.com', name: 'Other' });
    expect(dupId.response!.status).toBe(409);
    expect(dupId.response!.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(dupId.error).toMatchObject({ status: 409, code: 'ID_TAKEN', title: 'Conflict' });
    const dupEmail = await create({ id: 'u2', email: 'ANN@Example.com', name: 'Ann 2' });
    expect(dupEmail.response!.status).toBe(409);
    expect(dupEmail.error).toMatchObject({ code: 'EMAIL_TAKEN' });
  });

  it('answers 400 with per-field errors for an invalid body', async () => {
    const res = await create({ email: 'not-an-email', name: '', phone: 42 } as unknown as api.CreateUserDto);
    expect(res.response!.status).toBe(400);
    expect(res.error).toMatchObject({ type: 'about:blank', status: 400, code: 'VALIDATION_FAILED' });
    const paths = res.error!.errors!.map((e) => e.path).sort();
    expect(paths).toEqual(['body.email', 'body.name', 'body.phone']);
    for (const e of res.error!.errors!) expect(e.message).toEqual(expect.any(String));
  });

  it('answers 400 for a missing required field, a missing body and the reserved id "admin"', async () => {
    const missing = await create({ email: 'a@example.com' } as api.CreateUserDto);
    expect(missing.error!.errors).toEqual([{ path: 'body.name', message: expect.stringContaining('required') }]);
    const noBody = await api.createUser({ client: admin, body: undefined as unknown as api.CreateUserDto });
    expect(noBody.response!.status).toBe(400);
    expect(noBody.error!.errors![0].path).toBe('body');
    const reserved = await create({ id: 'admin', email: 'a@example.com', name: 'A' });
    expect(reserved.response!.status).toBe(400);
    expect(reserved.error!.errors).toEqual([{ path: 'body.id', message: '"admin" is reserved' }]);
  });

  it('gets a user, 404 problem for an unknown id', async () => {
    await create({ id: 'u1', email: 'ann@example.com', name: 'Ann' });
    expect((await api.getUserById({ client: admin, path: { id: 'u1' } })).data!.data.email).toBe('ann@example.com');
    const missing = await api.getUserById({ client: admin, path: { id: 'nobody' } });
    expect(missing.response!.status).toBe(404);
    expect(missing.error).toMatchObject({ status: 404, code: 'NOT_FOUND' });
  });

  it('lists users with page / perPage and the paging meta, and filters by email and q', async () => {
    for (let i = 1; i <= 5; i++) await create({ id: `u${i}`, email: `u${i}@example.com`, name: i % 2 ? `Odd ${i}` : `Even ${i}` });
    const page3 = await api.getUsers({ client: admin, query: { page: 3, perPage: 2 } });
    expect(page3.response!.status).toBe(200);
    expect(page3.data!.data.map((u) => u.id)).toEqual(['u5']);
    expect(page3.data!.meta).toEqual({ total: 5, lastPage: 3, currentPage: 3, perPage: 2 });
    const defaults = await api.getUsers({ client: admin });
    expect(defaults.data!.meta).toEqual({ total: 5, lastPage: 1, currentPage: 1, perPage: 20 });
    const beyond = await api.getUsers({ client: admin, query: { page: 9 } });
    expect(beyond.data).toEqual({ data: [], meta: { total: 5, lastPage: 1, currentPage: 9, perPage: 20 } });
    const byEmail = await api.getUsers({ client: admin, query: { email: 'U2@EXAMPLE.COM' } });
    expect(byEmail.data!.data.map((u) => u.id)).toEqual(['u2']);
    const byQ = await api.getUsers({ client: admin, query: { q: 'even' } });
    expect(byQ.data!.data.map((u) => u.id)).toEqual(['u2', 'u4']);
    const empty = await api.getUsers({ client: admin, query: { q: 'nobody' } });
    expect(empty.data!.meta).toEqual({ total: 0, lastPage: 1, currentPage: 1, perPage: 20 });
  });

  it('answers 400 for perPage above 100, page 0 and non-integer paging', async () => {
    const tooBig = await api.getUsers({ client: admin, query: { perPage: 101 } });
    expect(tooBig.response!.status).toBe(400);
    expect(tooBig.error!.errors).toEqual([{ path: 'query.perPage', message: expect.any(String) }]);
    const zero = await api.getUsers({ client: admin, query: { page: 0 } });
    expect(zero.error!.errors).toEqual([{ path: 'query.page', message: expect.any(String) }]);
    const fraction = await api.getUsers({ client: admin, query: { perPage: 2.5 } });
    expect(fraction.error!.errors!.map((e) => e.path)).toEqual(['query.perPage']);
  });

  it('updates a user; phone null clears it; 409 on a taken email; 404 unknown; 400 invalid', async () => {
    await create({ id: 'u1', email: 'ann@example.com', name: 'Ann', phone: '+1 555' });
    await create({ id: 'u2', email: 'bob@example.com', name: 'Bob' });
    const renamed = await api.updateUser({ client: admin, path: { id: 'u1' }, body: { name: 'Annie', phone: null } });
    expect(renamed.response!.status).toBe(200);
    expect(renamed.data!.data).toMatchObject({ id: 'u1', name: 'Annie', email: 'ann@example.com' });
    expect(renamed.data!.data).not.toHaveProperty('phone');
    const taken = await api.updateUser({ client: admin, path: { id: 'u2' }, body: { email: 'ANN@example.com' } });
    expect(taken.response!.status).toBe(409);
    expect(taken.error).toMatchObject({ code: 'EMAIL_TAKEN' });
    const unknown = await api.updateUser({ client: admin, path: { id: 'nobody' }, body: { name: 'X' } });
    expect(unknown.response!.status).toBe(404);
    const invalid = await api.updateUser({ client: admin, path: { id: 'u1' }, body: { email: 'nope' } });
    expect(invalid.error!.errors!.map((e) => e.path)).toEqual(['body.email']);
  });

  it('deletes a user, returning it; then 404', async () => {
    await create({ id: 'u1', email: 'ann@example.com', name: 'Ann' });
    const deleted = await api.deleteUser({ client: admin, path: { id: 'u1' } });
    expect(deleted.response!.status).toBe(200);
    expect(deleted.data).toMatchObject({ success: true, data: { id: 'u1', email: 'ann@example.com' } });
    expect((await api.getUserById({ client: admin, path: { id: 'u1' } })).response!.status).toBe(404);
    expect((await api.deleteUser({ client: admin, path: { id: 'u1' } })).response!.status).toBe(404);
  });

  it('deactivateUser closes every live socket of the sub, refuses new handshakes; activateUser lifts it', async () => {
    await create({ id: 'u1', email: 'ann@example.com', name: 'Ann' });
    const tabs = [await h.client('bot', { sub: 'u1' }), await h.client('other-bot', { sub: 'u1' })];
    const bystander = await h.client('bot', { sub: 'u2' });
    const closed = tabs.map((s) => nextEvent(s, 'session:closed'));
    const gone = tabs.map((s) => nextEvent<string>(s, 'disconnect'));

    const res = await api.deactivateUser({ client: admin, path: { id: 'u1' } });
    expect(res.response!.status).toBe(200);
    expect(res.data).toEqual({ success: true, data: { id: 'u1', deactivated: true } });
    expect(await Promise.all(closed)).toEqual([
      { code: 'USER_DEACTIVATED', retryable: false },
      { code: 'USER_DEACTIVATED', retryable: false },
    ]);
    expect(await Promise.all(gone)).toEqual(['io server disconnect', 'io server disconnect']);
    expect(bystander.connected).toBe(true);

    expect(await refusal(clientSocket(h.url, { token: mintToken({ sub: 'u1' }), agentId: 'bot' }))).toEqual({
      code: 'USER_DEACTIVATED',
      retryable: false,
    });
    expect((await api.getUserById({ client: admin, path: { id: 'u1' } })).data!.data.deactivated).toBe(true);
    const ownToken = await api.me({ client: bearerClient(h.url, mintToken({ sub: 'u1' })) });
    expect(ownToken.response!.status).toBe(403);
    expect(ownToken.error).toMatchObject({ code: 'USER_DEACTIVATED' });

    // The deactivation outlives the user record.
    await api.deleteUser({ client: admin, path: { id: 'u1' } });
    expect(await refusal(clientSocket(h.url, { token: mintToken({ sub: 'u1' }), agentId: 'bot' }))).toMatchObject({
      code: 'USER_DEACTIVATED',
    });

    const activated = await api.activateUser({ client: admin, path: { id: 'u1' } });
    expect(activated.data).toEqual({ success: true, data: { id: 'u1', deactivated: false } });
    const back: Socket = await h.client('bot', { sub: 'u1' });
    expect(back.connected).toBe(true);
  });

  it('deactivates any sub, even one never created here (an anonymous embed user)', async () => {
    const socket = await h.client('bot', { sub: 'anon_123' });
    const closed = nextEvent(socket, 'session:closed');
    expect((await api.deactivateUser({ client: admin, path: { id: 'anon_123' } })).response!.status).toBe(200);
    expect(await closed).toEqual({ code: 'USER_DEACTIVATED', retryable: false });
  });

  it('requires an ADMIN bearer token: 401 without or with a bad token, 403 for a non-admin', async () => {
    const cases: [Client, number, string][] = [
      [anonymousClient(h.url), 401, 'TOKEN_REQUIRED'],
      [bearerClient(h.url, 'garbage'), 401, 'TOKEN_INVALID'],
      [bearerClient(h.url, adminToken({ expiresIn: -60 })), 401, 'TOKEN_EXPIRED'],
      [bearerClient(h.url, mintToken({ sub: 'root', roles: ['ADMIN'] }, 'another-secret-that-is-long-enough-here')), 401, 'TOKEN_INVALID'],
      [bearerClient(h.url, mintToken({ sub: 'joe' })), 403, 'ROLE_REQUIRED'],
      [bearerClient(h.url, mintToken({ sub: 'joe', roles: ['USER'] })), 403, 'ROLE_REQUIRED'],
    ];
    for (const [client, status, code] of cases) {
      const res = await api.getUsers({ client });
      expect({ code, status: res.response!.status, body: res.error }).toEqual({
        code,
        status,
        body: expect.objectContaining({ status, code }),
      });
      const write = await create({ email: 'x@example.com', name: 'X' }, client);
      expect(write.response!.status).toBe(status);
    }
    expect((await api.getUsers({ client: admin })).data!.meta.total).toBe(0);
  });
});
