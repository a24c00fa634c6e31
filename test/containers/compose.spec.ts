// The README's `docker compose` commands, run as written (the offline path: host set-up, the
// secrets exported, `docker compose up --build -d --wait`), then everything through nginx as a user
// would reach it, then failover and Redis restarts of that stack.
//
// The redis, nginx and node base images are LOCAL STAND-INS for the official Docker Hub images under
// the same tags (scripts/containers/stand-ins.sh, made by the README's first line), because no
// registry is reachable on the machines this tier runs on. `--build` rebuilds the hub image from
// deploy/Dockerfile on the global set-up's build cache.
import { execFileSync, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { COMPOSE_PROJECT_PREFIX } from './support/docker-env';
import { COMPOSE_FILE, ROOT, TOKEN_CLI } from './support/paths';
import { chatToken, connectAgent, connectClient, reconnected, roundTrips, type Ack, type ChatClient } from './support/peers';
import { sleep, waitFor } from '../helpers/wait';

const HUBS = ['hub-1', 'hub-2', 'hub-3'];
const AGENT_ID = 'compose-bot';
const SECRETS = ['JWT_SECRET', 'ADMIN_JWT_SECRET', 'AGENT_API_KEYS'] as const;

async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The shell block of a markdown section: the first ```sh block after `heading`. */
function shellBlock(file: string, heading: string): string {
  const text = readFileSync(join(ROOT, file), 'utf8');
  const from = text.indexOf(heading);
  if (from < 0) throw new Error(`${file} has no section ${heading}`);
  const block = /```sh\n([\s\S]*?)```/.exec(text.slice(from));
  if (!block) throw new Error(`${file}: no sh block under ${heading}`);
  return block[1];
}

/** A start-log line that reports a failure: an error level, an error object or stack, or not JSON at all. */
function failureLine(line: string): boolean {
  let entry: { level?: number; err?: unknown; msg?: string };
  try {
    entry = JSON.parse(line) as typeof entry;
  } catch {
    return line.trim() !== '';
  }
  return (entry.level ?? 0) >= 50 || entry.err !== undefined || /EROFS/.test(line);
}

describe("the README's docker compose commands (docker-compose.yml)", () => {
  const project = `${COMPOSE_PROJECT_PREFIX}${randomUUID().slice(0, 8)}`;
  /** What the README's block exported, read back after it ran; the stack's settings for later commands. */
  const env: Record<string, string> = {};
  let url: string;
  const closers: (() => void)[] = [];

  /** `docker compose` on this project, with the same environment as `up`. */
  const compose = (...args: string[]) =>
    execFileSync('docker', ['compose', '-p', project, '-f', COMPOSE_FILE, ...args], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  const ids = new Map<string, string>();
  /** The container of a compose service (asked again after `forget`, e.g. once it is recreated). */
  const containerId = (service: string) => {
    if (!ids.has(service)) ids.set(service, compose('ps', '-a', '-q', service).trim());
    return ids.get(service)!;
  };
  const forget = (service: string) => ids.delete(service);
  const logsOf = (service: string) =>
    execFileSync('docker', ['logs', containerId(service)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  /** The hub service whose log accepted the handshake of `socketId` (the hubs log every accepted handshake). */
  const replicaOf = (socketId: string | undefined, services = HUBS) =>
    services.find((s) =>
      logsOf(s)
        .split('\n')
        .some((l) => l.includes('handshake accepted') && l.includes(`"socketId":"${socketId}"`)),
    );

  beforeAll(async () => {
    // Only the project name and the published port are set around the README's lines, so this stack
    // cannot collide with another; both are variables the README's commands honour as written.
    env.COMPOSE_PROJECT_NAME = project;
    env.RELAY_HUB_PORT = String(await freePort());
    url = `http://127.0.0.1:${env.RELAY_HUB_PORT}`;
    const block = shellBlock('README.md', '## Running it for real');
    // The same lines in docs/deployment.md, between its markers, so the two cannot drift apart.
    const deployment = readFileSync(join(ROOT, 'docs/deployment.md'), 'utf8');
    expect(deployment).toContain(`<!-- compose-commands:start -->\n\`\`\`sh\n${block}\`\`\`\n<!-- compose-commands:end -->`);
    const report = SECRETS.map((name) => `printf '${name}=%s\\n' "$${name}"`).join('\n');
    const run = spawnSync('bash', ['-euo', 'pipefail', '-c', `${block}\n${report}\n`], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      encoding: 'utf8',
      timeout: 600_000,
      maxBuffer: 64 << 20,
    });
    if (run.status !== 0) throw new Error(`the README's compose commands failed (${run.status}):\n${run.stderr}\n${run.stdout}`);
    for (const line of run.stdout.split('\n')) {
      const [name, value] = line.split(/=(.*)/s);
      if ((SECRETS as readonly string[]).includes(name)) env[name] = value;
    }
    // The README's export line carries every secret the stack and the next commands need.
    expect(SECRETS.filter((name) => !env[name])).toEqual([]);
    expect(env.JWT_SECRET.length).toBeGreaterThanOrEqual(32);
    // `--wait` returned once Redis and every hub were healthy; nginx has no healthcheck of its own.
    await waitFor(
      () =>
        fetch(`${url}/health/ready`).then(
          (r) => r.status === 200,
          () => false,
        ),
      30_000,
      'nginx to answer /health/ready after docker compose up --wait',
      250,
    );
  }, 660_000);

  afterAll(() => {
    closers.forEach((close) => close());
    if (env.JWT_SECRET) compose('down', '-v', '--remove-orphans', '-t', '0');
  });

  test('no hub logged an error, an error object or a stack trace while starting', () => {
    for (const hub of HUBS) {
      const lines = logsOf(hub).split('\n');
      const started = lines.findIndex((l) => l.includes('relay-hub listening on'));
      expect({ hub, started: started >= 0 }).toEqual({ hub, started: true });
      expect({ hub, failures: lines.slice(0, started + 1).filter(failureLine) }).toEqual({ hub, failures: [] });
    }
  });

  test('relays one message from a client to a bot and back through nginx', async () => {
    const bot = await connectAgent(url, env.AGENT_API_KEYS.split(',')[0], 'first-bot', { echo: true });
    closers.push(() => bot.socket.close());
    const client = await connectClient(url, chatToken(env.JWT_SECRET, 'first-user'), 'first-bot');
    closers.push(() => client.socket.close());
    const ack = await client.send('hello through compose');
    expect(ack.ok).toBe(true);
    await client.waitFor((m) => m.text === 'echo:hello through compose');
  });

  test('hubs run read-only with a tmpfs, under an init', () => {
    for (const hub of HUBS) {
      const host = JSON.parse(
        execFileSync('docker', ['inspect', '-f', '{{json .HostConfig}}', containerId(hub)], { encoding: 'utf8' }),
      ) as {
        ReadonlyRootfs: boolean;
        Init: boolean;
        Tmpfs: Record<string, string>;
      };
      expect({ hub, readOnly: host.ReadonlyRootfs, init: host.Init, tmpfs: Object.keys(host.Tmpfs ?? {}) }).toEqual({
        hub,
        readOnly: true,
        init: true,
        tmpfs: ['/tmp'],
      });
    }
  });

  test('nginx serves the hub: / (a landing page linking the docs), /api, /api-json, /asyncapi, /sdk/embed.mjs', async () => {
    const root = await fetch(`${url}/`);
    // Production (no demo page): the landing page, linking the REST docs and the protocol page.
    expect(root.status).toBe(200);
    expect(root.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await root.text();
    expect(html).toContain('href="./api/"');
    expect(html).toContain('href="./asyncapi"');

    const docs = await fetch(`${url}/api`);
    expect(docs.status).toBe(200);
    expect(await docs.text()).toMatch(/swagger-ui/i);

    const spec = await fetch(`${url}/api-json`);
    expect(spec.status).toBe(200);
    expect(((await spec.json()) as { openapi: string }).openapi).toMatch(/^3\./);

    const protocol = await fetch(`${url}/asyncapi`);
    expect(protocol.status).toBe(200);

    const sdk = await fetch(`${url}/sdk/embed.mjs`);
    expect(sdk.status).toBe(200);
    expect(sdk.headers.get('content-type')).toMatch(/javascript/);
    expect(await sdk.text()).toMatch(/RelayChat/);
  });

  let agent: Awaited<ReturnType<typeof connectAgent>>;
  let agentReplica: string | undefined;

  test('an agent and clients on different replicas relay 200 round trips through nginx', async () => {
    agent = await connectAgent(url, env.AGENT_API_KEYS.split(',')[0], AGENT_ID, { echo: true, reconnection: true });
    closers.push(() => agent.socket.close());
    agentReplica = replicaOf(agent.socket.id);
    expect(agentReplica).toBeDefined();

    // Websocket-only handshakes (what the SDKs send) are balanced by open connections: with the
    // agent's connection open, the next ones go to the other replicas.
    const clients: ChatClient[] = [];
    for (let i = 0; i < 6; i++) {
      const client = await connectClient(url, chatToken(env.JWT_SECRET, `ws-user-${i}`), AGENT_ID);
      closers.push(() => client.socket.close());
      clients.push(client);
    }
    const replicas = clients.map((c) => replicaOf(c.socket.id));
    const far = clients.filter((_, i) => replicas[i] !== undefined && replicas[i] !== agentReplica);
    expect(new Set(replicas.filter((r) => r !== agentReplica)).size).toBe(2);

    const ids = await roundTrips(far, 200, 'compose');
    const delivered = new Set(agent.received.map((m) => m.id));
    expect(ids.filter((id) => !delivered.has(id))).toEqual([]);
  });

  test('a default socket.io-client (long-polling first, then upgrade) works through nginx', async () => {
    const clients: ChatClient[] = [];
    for (let i = 0; i < 3; i++) {
      const client = await connectClient(url, chatToken(env.JWT_SECRET, `polling-user-${i}`), AGENT_ID, { transport: 'default' });
      closers.push(() => client.socket.close());
      await client.upgraded();
      clients.push(client);
    }
    await roundTrips(clients, 60, 'polling');
    for (const client of clients) {
      expect({ transports: client.transports, upgradeErrors: client.upgradeErrors }).toEqual({
        transports: ['polling', 'websocket'],
        upgradeErrors: [],
      });
    }
  });

  test('docker kill of a hub: its clients reconnect through nginx and every message acked ok is delivered', async () => {
    // Reconnecting clients until two sit on one replica other than the agent's: the victim. Least-conn
    // spreads them, so this takes about six; twelve bounds it.
    const clients: { client: ChatClient; replica?: string }[] = [];
    const victimOf = () => HUBS.find((h) => h !== agentReplica && clients.filter((c) => c.replica === h).length >= 2);
    for (let i = 0; i < 12 && (clients.length < 6 || !victimOf()); i++) {
      const client = await connectClient(url, chatToken(env.JWT_SECRET, `survivor-${i}`), AGENT_ID, { reconnection: true });
      closers.push(() => client.socket.close());
      clients.push({ client, replica: replicaOf(client.socket.id) });
    }
    const victim = victimOf()!;
    expect(victim).toBeDefined();
    const onVictim = clients.filter((c) => c.replica === victim).map((c) => c.client);
    const reconnects = onVictim.map((c) => reconnected(c.socket, 30_000));

    // Every client keeps sending through the kill. A message is retried with the same
    // clientMessageId (as the embed SDK does) until the hub acks it ok; nothing acked ok may be lost.
    const acked: string[] = [];
    let killed = false;
    const sendUntilOk = async (client: ChatClient, text: string) => {
      const clientMessageId = randomUUID();
      for (let attempt = 0; attempt < 30; attempt++) {
        const ack: Ack | undefined = await client.send(text, clientMessageId, 5000).catch(() => undefined);
        if (ack?.ok) return acked.push(ack.id);
        await sleep(200); // back off before the retry
      }
      throw new Error(`${text} never acked ok`);
    };
    const senders = clients.map(async ({ client }, i) => {
      for (let n = 0; n < 40; n++) {
        await sendUntilOk(client, `kill-${i}-${n}`);
        if (n === 10 && i === 0 && !killed) {
          killed = true;
          execFileSync('docker', ['kill', containerId(victim)]);
        }
      }
    });
    await Promise.all(senders);
    await Promise.all(reconnects);
    expect(killed).toBe(true);

    // Reconnected through nginx to the surviving replicas.
    for (const client of onVictim)
      expect([undefined, victim]).not.toContain(
        replicaOf(
          client.socket.id,
          HUBS.filter((h) => h !== victim),
        ),
      );
    expect(acked).toHaveLength(clients.length * 40);
    const delivered = new Set(agent.received.map((m) => m.id));
    expect(acked.filter((id) => !delivered.has(id))).toEqual([]);

    compose('start', victim); // back to three replicas for what follows
  });

  test('a Redis container recreated on its volume keeps users and API keys; relay resumes by itself', async () => {
    const hub = HUBS.find((h) => h !== agentReplica)!;
    const admin = execFileSync('docker', ['exec', containerId(hub), ...TOKEN_CLI, '--sub', 'ops', '--admin', '--expires-in', '10m'], {
      encoding: 'utf8',
    })
      .trim()
      .split('\n')
      .pop()!;
    const headers = { authorization: `Bearer ${admin}`, 'content-type': 'application/json' };
    const userId = `user-${randomUUID()}`;
    const user = await fetch(`${url}/users`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ id: userId, email: `${userId}@example.com`, name: 'Kept User' }),
    });
    expect(user.status).toBe(201);
    const key = await fetch(`${url}/api-keys`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ name: 'kept key', scopes: ['embed:mint'], agentIds: ['*'] }),
    });
    expect(key.status).toBe(201);
    const { id: keyId, key: secret } = ((await key.json()) as { data: { id: string; key: string } }).data;

    const chat = await connectClient(url, chatToken(env.JWT_SECRET, 'through-redis-restart'), AGENT_ID, { reconnection: true });
    closers.push(() => chat.socket.close());
    expect((await chat.send('before the restart')).ok).toBe(true);

    // /data is a named volume; a new container on it must read the append-only file back.
    const before = containerId('redis');
    const mounts = JSON.parse(execFileSync('docker', ['inspect', '-f', '{{json .Mounts}}', before], { encoding: 'utf8' })) as {
      Type: string;
      Destination: string;
    }[];
    expect(mounts).toContainEqual(expect.objectContaining({ Type: 'volume', Destination: '/data' }));
    compose('up', '-d', '--no-deps', '--force-recreate', 'redis');
    forget('redis');
    expect(containerId('redis')).not.toBe(before);

    // Relay resumes without anyone reconnecting by hand: the same message id is retried until ok.
    const clientMessageId = randomUUID();
    let ack: Ack | undefined;
    for (let attempt = 0; attempt < 60 && !ack?.ok; attempt++) {
      ack = await chat.send('after the restart', clientMessageId, 5000).catch(() => undefined);
      if (!ack?.ok) await sleep(500);
    }
    expect(ack?.ok).toBe(true);
    await chat.waitFor((m) => m.text === 'echo:after the restart');

    // What was written before the restart is still there (read through any replica).
    // With the body beside the status, so a failure shows the problem the hub answered.
    const read = async (path: string) => {
      const response = await fetch(`${url}${path}`, { headers });
      return { status: response.status, body: await response.text() };
    };
    expect(await read(`/users/${userId}`)).toMatchObject({ status: 200 });
    expect(await read(`/api-keys/${keyId}`)).toMatchObject({ status: 200 });
    const minted = await fetch(`${url}/auth/embed/token`, {
      method: 'POST',
      headers: { 'api-key': secret, 'content-type': 'application/json' },
      body: JSON.stringify({ sub: 'minted-after-restart', expiresIn: '5m' }),
    });
    expect(minted.status).toBe(201);
  });
});
