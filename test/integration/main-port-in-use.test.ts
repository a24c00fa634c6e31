import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';

const MAIN = join(__dirname, '..', '..', 'dist', 'main.js');

/** Issue 10: a taken PORT gets a clear message and an exit code of its own, not a stack trace. */
it('exits 3 with a clear message when PORT is already in use', async () => {
  if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: run \`npm run build\` first`);
  const taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  const { port } = taken.address() as { port: number };
  try {
    const run = spawnSync(process.execPath, [MAIN], {
      encoding: 'utf8',
      timeout: 30_000,
      env: {
        PATH: process.env.PATH ?? '',
        NODE_ENV: 'development',
        PORT: String(port),
        HOST: '127.0.0.1',
        LOG_LEVEL: 'silent',
        DEMO_ENABLED: 'false',
        OPENAPI_SPEC_FILE: '/dev/null',
      },
    });
    expect(run.status).toBe(3);
    expect(run.stderr).toContain(`cannot listen on 127.0.0.1:${port}`);
    expect(run.stderr).toContain('EADDRINUSE');
    expect(run.stderr).not.toMatch(/\n\s+at /); // no stack trace
  } finally {
    taken.close();
  }
});
