import { spawn } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');
const SECRETS = { JWT_SECRET: 's'.repeat(32), AGENT_API_KEYS: 'k'.repeat(16) };

/** Runs dist/main.js with `env` until it exits (or 10 s), collecting its output. */
function run(env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const base: NodeJS.ProcessEnv = { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ...SECRETS, ...env };
  for (const key of ['REDIS_URL', 'REDIS_SENTINELS', 'REDIS_SENTINEL_NAME', 'REDIS_CLUSTER_NODES']) if (!(key in env)) delete base[key];
  const child = spawn(process.execPath, ['dist/main.js'], { cwd: ROOT, env: base, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  return new Promise((resolve) =>
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    }),
  );
}

describe('a bad Redis topology fails at start, naming the keys, before listening', () => {
  it.each([
    [{ REDIS_URL: 'redis://127.0.0.1:1', REDIS_CLUSTER_NODES: '127.0.0.1:2' }, 'REDIS_URL and REDIS_CLUSTER_NODES are both set'],
    [{ REDIS_SENTINELS: '127.0.0.1:2' }, 'REDIS_SENTINELS needs REDIS_SENTINEL_NAME'],
    [{ REDIS_CLUSTER_NODES: '127.0.0.1:7000,nonsense' }, 'REDIS_CLUSTER_NODES'],
  ])('%j', async (env, message) => {
    const { code, stdout, stderr } = await run(env);
    expect(code).toBe(1);
    expect(stderr).toContain(message);
    expect(stdout).not.toMatch(/listening/);
  });
});
