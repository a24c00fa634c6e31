import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { cpSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { connected, clientSocket, nextEvent, startHub, type TestHub } from '../helpers/hub';
import { mintToken, TEST_AGENT_KEY } from '../helpers/tokens';
import { Events, type ClientInboundMessage, type SendAck } from '../../src/protocol';

const run = promisify(execFile);
const ROOT = join(__dirname, '..', '..');
/** The npm the machine has, run on each Node below (npm 11 supports Node 20.17 and newer). */
const NPM_CLI = realpathSync(execFileSync('sh', ['-c', 'command -v npm'], { encoding: 'utf8' }).trim());
/** The Nodes a bot may run on: the system's (20 here) and the project's own (24). */
const NODES = [
  { name: 'system Node', bin: '/usr/bin/node' },
  { name: 'Node 24', bin: join(ROOT, 'node_modules', '.bin', 'node') },
];

/** npm on `node`, with that node first on PATH so install scripts would run on it too. */
const npm = (node: string, args: string[], cwd: string) =>
  run(node, [NPM_CLI, ...args, '--no-audit', '--no-fund', '--prefer-offline'], {
    cwd,
    env: { ...process.env, PATH: `${dirname(node)}${delimiter}${process.env.PATH}` },
    maxBuffer: 64 << 20,
  });

/**
 * A fresh clone, as far as the build can tell: the files git tracks (and new ones it would track)
 * of this tree, without dist/, generated code or node_modules; the toolchain from the shared
 * node_modules through a symlink, as `npm install` would have made it.
 */
function freshCopy(into: string): void {
  const listed = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8' });
  for (const file of listed.split('\0').filter(Boolean)) {
    const from = join(ROOT, file);
    let stat;
    try {
      stat = lstatSync(from);
    } catch {
      continue; // deleted in the work tree
    }
    if (!stat.isFile()) continue; // the node_modules symlink among them
    mkdirSync(dirname(join(into, file)), { recursive: true });
    cpSync(from, join(into, file));
  }
  symlinkSync(realpathSync(join(ROOT, 'node_modules')), join(into, 'node_modules'));
}

/** Packs a workspace of the copy; `npm pack` runs its prepack build. */
async function pack(clone: string, workspace: string, into: string): Promise<{ filename: string; files: string[] }> {
  const { stdout } = await npm(NODES[1].bin, ['pack', '-w', workspace, '--pack-destination', into, '--json'], clone);
  const [result] = JSON.parse(stdout.slice(stdout.indexOf('['))) as { filename: string; files: { path: string }[] }[];
  return { filename: join(into, result.filename), files: result.files.map((f) => f.path) };
}

interface Installed {
  version?: string;
  dependencies?: Record<string, string>;
  hasInstallScript?: boolean;
}

/** The packages an install put in node_modules, from npm's hidden lockfile, by name. */
function installedPackages(project: string): Map<string, Installed> {
  const lock = JSON.parse(readFileSync(join(project, 'node_modules', '.package-lock.json'), 'utf8')) as {
    packages: Record<string, Installed>;
  };
  return new Map(Object.entries(lock.packages).map(([path, entry]) => [path.replace(/^.*node_modules\//, ''), entry]));
}

/** `name` and everything it depends on, among what was installed. */
function closure(installed: Map<string, Installed>, name: string, seen = new Set<string>()): Set<string> {
  if (seen.has(name) || !installed.has(name)) return seen;
  seen.add(name);
  for (const dep of Object.keys(installed.get(name)!.dependencies ?? {})) closure(installed, dep, seen);
  return seen;
}

/** The README's first bot, as written, pointed at the test's hub. */
function readmeBot(): string {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Your first bot'));
  const code = /```js\n([\s\S]*?)```/.exec(section)![1];
  expect(code).toContain("from '@relay-hub/agent'");
  expect(code.split('\n').filter(Boolean).length).toBeLessThanOrEqual(10);
  // The hub's address comes from RELAY_HUB_URL, which the README exports once.
  expect(code).toContain('process.env.RELAY_HUB_URL');
  expect(code).not.toContain('localhost');
  return code;
}

describe('the SDK packages, packed from a fresh clone', () => {
  let dir: string;
  let clone: string;
  let agentTarball: { filename: string; files: string[] };
  let t: TestHub;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'relay-sdk-package-'));
    clone = join(dir, 'clone');
    freshCopy(clone);
    agentTarball = await pack(clone, 'sdk/agent', dir);
    t = await startHub();
  }, 240_000);
  afterAll(async () => {
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('@relay-hub/agent: npm pack builds it; the tarball holds the compiled SDK, the protocol and types, nothing else', () => {
    const { files } = agentTarball;
    expect(files).toEqual(
      expect.arrayContaining(['package.json', 'dist/sdk/agent/index.js', 'dist/sdk/agent/index.d.ts', 'dist/protocol/index.js']),
    );
    expect(files.filter((f) => !/^(package\.json|README\.md|dist\/(sdk\/agent|protocol)\/[\w.-]+\.(js|d\.ts))$/.test(f))).toEqual([]);
    const pkg = JSON.parse(readFileSync(join(clone, 'sdk/agent/package.json'), 'utf8')) as {
      dependencies: object;
      engines: { node: string };
    };
    expect(pkg.dependencies).toEqual({ 'socket.io-client': expect.any(String) });
    expect(pkg.engines.node).toBe('>=20');
  });

  it.each(NODES)(
    '@relay-hub/agent on the $name: installs socket.io-client’s tree only, no install scripts, no EBADENGINE; the README’s bot answers a client',
    async ({ name, bin }) => {
      const project = join(dir, `bot-${name.replace(/\W+/g, '-')}`);
      mkdirSync(project);
      writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'my-bot', version: '1.0.0', private: true, type: 'module' }));
      const { stderr } = await npm(bin, ['install', agentTarball.filename], project);
      expect(stderr).not.toMatch(/EBADENGINE/);

      const installed = installedPackages(project);
      installed.delete('');
      expect(installed.has('@relay-hub/agent')).toBe(true);
      const tree = closure(installed, 'socket.io-client');
      const others = [...installed.keys()].filter((p) => p !== '@relay-hub/agent' && !tree.has(p));
      expect(others).toEqual([]);
      expect([...installed].filter(([, entry]) => entry.hasInstallScript).map(([p]) => p)).toEqual([]);
      const version = execFileSync(bin, ['--version'], { encoding: 'utf8' }).trim();
      const size = execFileSync('du', ['-sk', join(project, 'node_modules')], { encoding: 'utf8' }).split('\t')[0];
      console.log(`${name} ${version}: ${installed.size} packages installed (${[...installed.keys()].sort().join(', ')}), ${size} KB`);

      writeFileSync(join(project, 'bot.mjs'), readmeBot());
      const bot = execFile(bin, ['bot.mjs'], {
        cwd: project,
        env: { ...process.env, AGENT_API_KEYS: TEST_AGENT_KEY, RELAY_HUB_URL: t.url },
      });
      try {
        let output = '';
        await new Promise<void>((resolve, reject) => {
          bot.stdout!.on('data', (chunk: Buffer) => {
            output += chunk.toString();
            if (output.includes('my-bot is online')) resolve();
          });
          bot.once('exit', (code) => reject(new Error(`the bot exited ${code} before it was online: ${output}`)));
        });
        const socket = clientSocket(t.url, { token: mintToken({ sub: `user-of-${name}` }), agentId: 'my-bot' });
        await connected(socket);
        const reply = nextEvent<ClientInboundMessage>(socket, Events.message);
        const ack = (await socket.emitWithAck(Events.message, { clientMessageId: 'c1', text: 'hi' })) as SendAck;
        expect(ack).toMatchObject({ ok: true });
        expect(await reply).toMatchObject({ agentId: 'my-bot', author: 'agent', text: 'You said: hi' });
        socket.disconnect();
      } finally {
        bot.kill();
      }
    },
    180_000,
  );

  // @relay-hub/embed is the browser SDK's former name, kept as an alias with the same files.
  it.each(['sdk/browser', 'sdk/embed'])(
    '%s: npm pack builds the two bundles and their types, with no dependencies',
    async (workspace) => {
      const { files } = await pack(clone, workspace, dir);
      expect(files).toEqual(
        expect.arrayContaining(['package.json', 'dist/embed.mjs', 'dist/embed.js', 'dist/types/sdk/browser/src/index.d.ts']),
      );
      expect(files.filter((f) => f.endsWith('.map') || f.startsWith('src/'))).toEqual([]);
      const pkg = JSON.parse(readFileSync(join(clone, workspace, 'package.json'), 'utf8')) as { dependencies?: object };
      expect(pkg.dependencies).toBeUndefined();
      // The published types stand alone: nothing in them names socket.io-client, which is not installed.
      const named = spawnSync('grep', ['-rl', 'socket.io-client', join(clone, workspace, 'dist/types')], { encoding: 'utf8' });
      expect({ status: named.status, files: named.stdout }).toEqual({ status: 1, files: '' });
    },
    120_000,
  );
});
