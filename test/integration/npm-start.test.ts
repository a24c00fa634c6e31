import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { AgentInboundMessage, ClientInboundMessage } from '../../src/protocol';
import { RelayAgent } from '../../src/sdk/agent';
import { clientSocket, connected, nextEvent } from '../helpers/hub';
import { mintToken } from '../helpers/tokens';

const ROOT = join(__dirname, '..', '..');

/**
 * What `npm start` runs after its build step, with the environment of a fresh machine: no secrets,
 * no Redis. (The build itself ran before the suite, as `npm test` builds first.)
 */
describe('the embedded default started as a user would', () => {
  let hub: ChildProcess;
  const lines: string[] = [];
  let url: string;

  beforeAll(async () => {
    const env: NodeJS.ProcessEnv = { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info' };
    for (const key of ['JWT_SECRET', 'AGENT_API_KEYS', 'REDIS_URL', 'NODE_ENV', 'DEMO_ENABLED']) delete env[key];
    // The command after the build step, node flags included (`node --max-semi-space-size=16 --no-allocation-site-pretenuring dist/main.js`).
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } };
    const [node, ...args] = pkg.scripts.start.split('&&').pop()!.trim().split(/\s+/);
    expect(node).toBe('node');
    expect(args.at(-1)).toBe('dist/main.js');
    hub = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'inherit'] });
    url = await new Promise<string>((resolve, reject) => {
      hub.once('exit', (code) => reject(new Error(`hub exited with ${code}:\n${lines.join('\n')}`)));
      createInterface({ input: hub.stdout! }).on('line', (line) => {
        lines.push(line);
        const match = /listening on (http:\/\/[^"\s]+)/.exec(line);
        if (match) resolve(match[1]);
      });
    });
  });

  afterAll(async () => {
    if (hub.exitCode === null) {
      hub.kill('SIGKILL');
      await new Promise((resolve) => hub.once('exit', resolve));
    }
  });

  /** The value of a printed `export NAME=value` line, as a shell would take it when pasted. */
  const printed = (name: string) => {
    const line = lines.find((l) => l.trim().startsWith(`export ${name}=`));
    if (!line) throw new Error(`export ${name}= was not printed:\n${lines.join('\n')}`);
    const value = line.trim().slice(`export ${name}=`.length);
    expect({ name, shellSafe: /^[A-Za-z0-9._~-]+$/.test(value) }).toEqual({ name, shellSafe: true });
    return value;
  };

  it('prints the generated development secrets as export lines and says state is in memory', () => {
    expect(printed('JWT_SECRET').length).toBeGreaterThanOrEqual(32);
    expect(printed('ADMIN_JWT_SECRET').length).toBeGreaterThanOrEqual(32);
    expect(printed('AGENT_API_KEYS')).toMatch(/^ak_/);
    expect(lines.join('\n')).toMatch(/in-memory state/);
  });

  it('prints $ADMIN, an admin token the ADMIN REST routes accept (the README creates an API key with it)', async () => {
    const headers = { authorization: `Bearer ${printed('ADMIN')}`, 'content-type': 'application/json' };
    expect((await fetch(`${url}/users`, { headers })).status).toBe(200);
    const created = await fetch(`${url}/api-keys`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ name: 'web backend', scopes: ['embed:mint'], agentIds: ['my-bot'] }),
    });
    expect(created.status).toBe(201);
    // The secret is the `key` field of the answer, shown once (docs/rest.md).
    expect(((await created.json()) as { data: { key: string } }).data.key).toMatch(/^rk_/);
  });

  it('answers health checks', async () => {
    expect((await fetch(`${url}/health/live`)).status).toBe(200);
    expect((await fetch(`${url}/health/ready`)).status).toBe(200);
  });

  it('relays between an agent and a client using the printed secrets', async () => {
    const agent = new RelayAgent({ url, apiKey: printed('AGENT_API_KEYS'), agentId: 'quickstart' });
    agent.onMessage((m: AgentInboundMessage) => agent.reply(m.from, `echo: ${m.text}`).then(() => undefined));
    await agent.connect();
    const client = clientSocket(url, { token: mintToken({ sub: 'first-user' }, printed('JWT_SECRET')), agentId: 'quickstart' });
    await connected(client);
    const reply = nextEvent<ClientInboundMessage>(client, 'message');
    const ack = await client.timeout(5000).emitWithAck('message', { clientMessageId: '1', text: 'hello' });
    expect(ack.ok).toBe(true);
    expect((await reply).text).toBe('echo: hello');
    client.disconnect();
    agent.close();
  });

  it('exits 0 on SIGTERM', async () => {
    const exited = new Promise<number | null>((resolve) => hub.once('exit', resolve));
    hub.kill('SIGTERM');
    expect(await exited).toBe(0);
  });
});
