import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { startHub } from '../helpers/hub';
import { TEST_ADMIN_JWT_SECRET, TEST_JWT_SECRET, testJwtService } from '../helpers/tokens';
import { api, bearerClient } from './rest-client.helper';

/** docs/rest.md ("Authentication"): `npm run token -- --sub <id> --admin` (node dist/auth/token.cli.js) gives the first ADMIN token. */
const CLI = join(__dirname, '..', '..', 'dist', 'auth', 'token.cli.js');

function runCli(args: string[], env: Record<string, string> = { JWT_SECRET: TEST_JWT_SECRET, ADMIN_JWT_SECRET: TEST_ADMIN_JWT_SECRET }) {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` first`);
  return spawnSync(process.execPath, [CLI, ...args], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '', NODE_ENV: 'test', ...env },
  });
}

const jwt = testJwtService();

describe('token CLI', () => {
  it('prints an admin token signed with ADMIN_JWT_SECRET that the ADMIN REST routes accept', async () => {
    const run = runCli(['--sub', 'me', '--admin', '--expires-in', '2h']);
    expect({ status: run.status, stderr: run.stderr }).toEqual({ status: 0, stderr: '' });
    const token = run.stdout.trim();
    const verified = jwt.verify(token);
    expect(verified).toMatchObject({
      ok: true,
      identity: { sub: 'me', clientId: 'admin', isAdmin: true, roles: ['ADMIN'], adminAuthority: true },
    });
    if (!verified.ok) throw new Error('unreachable');
    expect(Math.abs(verified.identity.expiresAtMs! - (Date.now() + 2 * 3600_000))).toBeLessThan(5000);

    const h = await startHub();
    try {
      const me = await api.me({ client: bearerClient(h.url, token) });
      expect(me.data!.data).toMatchObject({ clientId: 'admin', sub: 'me', roles: ['ADMIN'] });
      expect((await api.getUsers({ client: bearerClient(h.url, token) })).response!.status).toBe(200);
    } finally {
      await h.close();
    }
  });

  it('prints a plain user token without --admin', () => {
    const run = runCli(['--sub', 'u1']);
    expect(jwt.verify(run.stdout.trim())).toMatchObject({ ok: true, identity: { sub: 'u1', isAdmin: false, roles: [] } });
  });

  it('refuses to run without JWT_SECRET, without ADMIN_JWT_SECRET for --admin, without --sub, or with sub "admin" and no --admin', () => {
    const noSecret = runCli(['--sub', 'me'], {});
    expect(noSecret.status).toBe(2);
    expect(noSecret.stderr).toContain('JWT_SECRET is not set');
    const noAdminSecret = runCli(['--sub', 'me', '--admin'], { JWT_SECRET: TEST_JWT_SECRET });
    expect(noAdminSecret.status).toBe(2);
    expect(noAdminSecret.stderr).toContain('ADMIN_JWT_SECRET is not set');
    const noSub = runCli(['--admin']);
    expect(noSub.status).toBe(2);
    expect(noSub.stderr).toContain('--sub is required');
    const reserved = runCli(['--sub', 'admin']);
    expect(reserved.status).toBe(2);
    expect(reserved.stderr).toContain('reserved');
  });
});
