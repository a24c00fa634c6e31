import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { connected, clientSocket, nextEvent, startHub, type TestHub } from '../helpers/hub';
import { mintToken, TEST_AGENT_KEY } from '../helpers/tokens';
import { Events, type ClientInboundMessage, type SendAck } from '../../src/protocol';

const run = promisify(execFile);
const root = join(__dirname, '..', '..');
const npm = (args: string[], cwd: string) =>
  run('npm', [...args, '--no-audit', '--no-fund', '--loglevel=error'], { cwd, maxBuffer: 16 << 20 });

/**
 * What a bot author does: `npm pack` of the project (built by `npm test`), the tarball installed
 * into an empty project, a bot there that imports `relay-hub/agent` and chats with a running hub.
 * The bot also reports every module it loaded, so a server module sneaking into the SDK fails here.
 */
describe('the agent SDK as a package of its own', () => {
  let dir: string;
  let t: TestHub;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'relay-sdk-package-'));
    const { stdout } = await npm(['pack', '--pack-destination', dir], root);
    const tarball = stdout.trim().split('\n').pop()!;
    expect(readdirSync(dir)).toContain(tarball);
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'my-bot', version: '1.0.0', private: true, type: 'module' }));
    await npm(['install', join(dir, tarball)], dir);
    t = await startHub();
  }, 240_000);
  afterAll(async () => {
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('installs from the tarball; a bot importing relay-hub/agent answers a client and loads no server module', async () => {
    writeFileSync(
      join(dir, 'bot.mjs'),
      `import { createRequire } from 'node:module';
import { RelayAgent } from 'relay-hub/agent';

const [url, apiKey] = process.argv.slice(2);
const bot = new RelayAgent({ url, apiKey, agentId: 'packaged-bot' });
bot.onMessage(async (m) => {
  await bot.reply(m.from, 'echo: ' + m.text);
  // Every CommonJS module loaded so far (the package is CommonJS; ESM imports of it land here too).
  const loaded = Object.keys(createRequire(import.meta.url).cache);
  process.stdout.write(JSON.stringify({ loaded }) + '\\n');
  bot.close();
});
await bot.connect();
process.stdout.write('ready\\n');
`,
    );
    const child = execFile(process.execPath, ['bot.mjs', t.url, TEST_AGENT_KEY], { cwd: dir });
    let output = '';
    const seen = (text: string) =>
      new Promise<void>((resolve, reject) => {
        const check = () => output.includes(text) && resolve();
        child.stdout!.on('data', check);
        child.once('exit', (code) => reject(new Error(`bot exited ${code} before printing ${text}: ${output}`)));
      });
    child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const loadedLine = seen('"loaded"');
    await seen('ready');

    const socket = clientSocket(t.url, { token: mintToken({ sub: 'pkg-user' }), agentId: 'packaged-bot' });
    await connected(socket);
    const reply = nextEvent<ClientInboundMessage>(socket, Events.message);
    const ack = await socket.emitWithAck(Events.message, { clientMessageId: 'c1', text: 'hi' });
    expect(ack as SendAck).toMatchObject({ ok: true });
    expect(await reply).toMatchObject({ agentId: 'packaged-bot', text: 'echo: hi' });
    socket.disconnect();

    await loadedLine;
    const { loaded } = JSON.parse(output.split('\n').find((l) => l.includes('"loaded"'))!) as { loaded: string[] };
    const fromPackage = loaded.filter((p) => p.includes('/node_modules/relay-hub/')).map((p) => p.split('/node_modules/relay-hub/')[1]);
    expect(fromPackage.length).toBeGreaterThan(0);
    for (const file of fromPackage) expect(file).toMatch(/^dist\/(sdk\/agent|protocol)\//);
    const server = loaded.filter((p) =>
      /\/node_modules\/(express|ioredis|@tsoa|socket\.io|engine\.io|convict|pino|prom-client|swagger-ui-express|jsonwebtoken)\//.test(p),
    );
    expect(server).toEqual([]);
  }, 60_000);
});
