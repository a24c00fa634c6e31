// deploy/Dockerfile, checked without a Docker engine: same Node major as the npm scripts, multi-stage
// with dev dependencies left behind, non-root, health-checked, and a build context without secrets.
import { execFile, execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { HUB_NODE_FLAGS } from '../../../deploy/cluster.cjs';
import { configSchema } from '../../../src/config/config.schema';

/** The settings naming a file the hub writes on every start (the spec files). */
const WRITTEN_FILES = Object.keys(configSchema).filter((key) => key.endsWith('_FILE'));

const ROOT = join(__dirname, '..', '..', '..');

type Instruction = { keyword: string; args: string; line: number };
type Stage = { image: string; name?: string; instructions: Instruction[] };

/** Dockerfile instructions with continuation lines joined and comments (and parser directives) dropped. */
function parseDockerfile(text: string): Instruction[] {
  const out: Instruction[] = [];
  let pending = '';
  let start = 0;
  text.split('\n').forEach((raw, index) => {
    const line = raw.trimEnd();
    if (/^\s*#/.test(line)) return; // comments may sit inside continuations too
    if (!pending && line.trim() === '') return;
    if (!pending) start = index + 1;
    if (line.endsWith('\\')) {
      pending += `${line.slice(0, -1)} `;
      return;
    }
    const full = (pending + line).trim();
    pending = '';
    const m = /^(\w+)\s+([\s\S]*)$/.exec(full);
    if (!m) throw new Error(`line ${start}: cannot parse "${full}"`);
    out.push({ keyword: m[1].toUpperCase(), args: m[2].trim(), line: start });
  });
  if (pending) throw new Error('Dockerfile ends inside a line continuation');
  return out;
}

function stages(instructions: Instruction[]): Stage[] {
  const out: Stage[] = [];
  for (const ins of instructions) {
    if (ins.keyword === 'FROM') {
      const m = /^(?:--platform=\S+\s+)?(\S+)(?:\s+AS\s+(\S+))?$/i.exec(ins.args);
      if (!m) throw new Error(`line ${ins.line}: cannot parse FROM ${ins.args}`);
      out.push({ image: m[1], name: m[2], instructions: [] });
    } else if (out.length === 0) {
      if (ins.keyword !== 'ARG') throw new Error(`line ${ins.line}: ${ins.keyword} before FROM`);
    } else {
      out[out.length - 1].instructions.push(ins);
    }
  }
  return out;
}

/** The exec-form JSON array of CMD / HEALTHCHECK CMD, or the shell form as one string. */
function command(args: string): string[] {
  const trimmed = args.replace(/^CMD\s+/, '');
  return trimmed.startsWith('[') ? (JSON.parse(trimmed) as string[]) : [trimmed];
}

const packageJson = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  devDependencies: Record<string, string>;
  engines?: { node?: string };
};
const all = parseDockerfile(readFileSync(join(ROOT, 'deploy', 'Dockerfile'), 'utf8'));
const allStages = stages(all);
const final = allStages[allStages.length - 1];
const finalOf = (keyword: string) => final.instructions.filter((i) => i.keyword === keyword);

describe('deploy/Dockerfile', () => {
  test("builds with the engine's built-in frontend: no `# syntax=` directive (it pulls a frontend image)", () => {
    const text = readFileSync(join(ROOT, 'deploy', 'Dockerfile'), 'utf8');
    // Parser directives are comments of the form `# key=value` before the first instruction.
    const directives = text.split('\n').slice(
      0,
      text.split('\n').findIndex((l) => /^\s*[A-Za-z]/.test(l)),
    );
    expect(directives.filter((l) => /^#\s*syntax\s*=/i.test(l))).toEqual([]);
  });

  test('writes every file the hub writes (the *_FILE settings) under /tmp and says a read-only root filesystem needs a tmpfs there', () => {
    const env = finalOf('ENV')
      .map((e) => e.args)
      .join(' ');
    expect(WRITTEN_FILES.length).toBeGreaterThanOrEqual(2);
    for (const key of WRITTEN_FILES) expect({ key, underTmp: new RegExp(`\\b${key}=/tmp/`).test(env) }).toEqual({ key, underTmp: true });
    const text = readFileSync(join(ROOT, 'deploy', 'Dockerfile'), 'utf8');
    expect(text).toMatch(/read-only root filesystem[\s\S]*tmpfs/);
    expect(text).not.toMatch(/\/tmp stays writable/);
  });

  test('every Node base image has the major of the node devDependency the npm scripts run on', () => {
    const range = packageJson.devDependencies.node;
    expect(range).toBeDefined();
    const major = /(\d+)/.exec(range)![1];
    const stageNames = new Set(allStages.map((s) => s.name).filter(Boolean));
    const external = allStages.map((s) => s.image).filter((image) => !stageNames.has(image));
    expect(external.length).toBeGreaterThan(0);
    for (const image of external) {
      // node:24-bookworm-slim, node:24.11-slim, docker.io/library/node:24 …
      expect(image).toMatch(new RegExp(`^(docker\\.io/(library/)?)?node:${major}(\\.\\d+){0,2}(-[\\w.-]+)?(@sha256:[0-9a-f]{64})?$`));
    }
    expect(packageJson.engines?.node).toMatch(new RegExp(`\\b${major}\\b`));
  });

  test('builds with npm ci + npm run build and ships production dependencies only', () => {
    expect(allStages.length).toBeGreaterThanOrEqual(2);
    const runs = all.filter((i) => i.keyword === 'RUN').map((i) => i.args);
    expect(runs.some((r) => /\bnpm ci\b/.test(r) && !/--omit=dev/.test(r))).toBe(true);
    expect(runs.some((r) => /\bnpm run build\b/.test(r))).toBe(true);

    // node_modules in the final image come from a stage that pruned dev dependencies.
    const nodeModules = finalOf('COPY').filter((c) => /node_modules/.test(c.args));
    expect(nodeModules).toHaveLength(1);
    const from = /--from=(\S+)/.exec(nodeModules[0].args)?.[1];
    const source = allStages.find((s) => s.name === from);
    expect(source).toBeDefined();
    const sourceRuns = source!.instructions.filter((i) => i.keyword === 'RUN').map((i) => i.args);
    expect(sourceRuns.some((r) => /npm (ci|prune|install)\b.*(--omit=dev|--production)/.test(r))).toBe(true);
    // The final stage installs nothing itself.
    expect(finalOf('RUN').filter((r) => /\bnpm (ci|install)\b/.test(r.args))).toEqual([]);
  });

  test('runs as a non-root user', () => {
    const users = finalOf('USER');
    expect(users.length).toBeGreaterThan(0);
    const user = users[users.length - 1].args.split(':')[0];
    expect(['root', '0']).not.toContain(user);
  });

  test('health-checks /health/live with node (slim images have no curl)', () => {
    const checks = finalOf('HEALTHCHECK');
    expect(checks).toHaveLength(1);
    // Starting node alone can take seconds on a loaded host; a short timeout marks a serving hub unhealthy.
    expect(Number(/--timeout=(\d+)s/.exec(checks[0].args)?.[1] ?? 30)).toBeGreaterThanOrEqual(10);
    const cmd = command(checks[0].args.replace(/^(--\S+\s+)*/, ''));
    expect(cmd[0]).toBe('node');
    expect(cmd.join(' ')).toMatch(/\/health\/live/);
    expect(cmd.join(' ')).not.toMatch(/\b(curl|wget)\b/);
  });

  test('the health command passes on 200 from /health/live and fails on an error or no server', async () => {
    const cmd = command(finalOf('HEALTHCHECK')[0].args.replace(/^(--\S+\s+)*/, ''));
    let status = 200;
    const paths: string[] = [];
    const server = http.createServer((req, res) => {
      paths.push(req.url!);
      res.statusCode = status;
      res.end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    // Same node major as the image; the command reads PORT like the hub does.
    const run = (p: number) =>
      new Promise<number>((resolve) => {
        execFile(process.execPath, cmd.slice(1), { env: { ...process.env, PORT: String(p) }, timeout: 10_000 }, (err) =>
          resolve(err ? ((err as { code?: number }).code ?? -1) : 0),
        );
      });
    try {
      expect(await run(port)).toBe(0);
      status = 503;
      expect(await run(port)).not.toBe(0);
    } finally {
      server.close();
    }
    expect(paths).toEqual(['/health/live', '/health/live']);
    expect(await run(port)).not.toBe(0); // nothing listens any more
  });

  test("exposes 3000, stops with SIGTERM and starts dist/main.js with the hub's node flags", () => {
    expect(finalOf('EXPOSE').map((e) => e.args)).toEqual(['3000']);
    expect(finalOf('STOPSIGNAL').map((e) => e.args)).toEqual(['SIGTERM']);
    const cmds = finalOf('CMD');
    // bench/scale.mjs: V8's default young generation, grown by a connect burst, is most of an idle
    // hub's RSS per client, and 16 MiB semi-spaces cap it; V8's pretenuring doubled what each
    // scavenge copies under relay load (docs/adr/0003, docs/adr/0004).
    expect(HUB_NODE_FLAGS).toEqual(['--max-semi-space-size=16', '--no-allocation-site-pretenuring']);
    expect(command(cmds[cmds.length - 1].args)).toEqual(['node', ...HUB_NODE_FLAGS, 'dist/main.js']);
    expect(finalOf('ENTRYPOINT')).toEqual([]);
  });

  test('npm start runs the hub with the same node flags as the image and the local cluster', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } };
    const started = pkg.scripts.start.split('&&').pop()!.trim().split(/\s+/);
    expect(started).toEqual(['node', ...HUB_NODE_FLAGS, 'dist/main.js']);
  });

  test('the node flags of CMD are ones this Node accepts', () => {
    // A misspelt or removed V8 flag would stop the container at start (`node: bad option`).
    const cmds = finalOf('CMD');
    const flags = command(cmds[cmds.length - 1].args).filter((arg) => arg.startsWith('--'));
    expect(flags.length).toBeGreaterThan(0);
    const out = execFileSync(process.execPath, [...flags, '-e', 'process.stdout.write("started")'], { encoding: 'utf8' });
    expect(out).toBe('started');
  });
});

describe('.dockerignore', () => {
  const patterns = readFileSync(join(ROOT, '.dockerignore'), 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));

  test('keeps installed modules, build output, git history and env files out of the context', () => {
    expect(patterns).toEqual(expect.arrayContaining(['node_modules', 'dist', '.git', '.env', '.env.*']));
  });

  test('keeps what the build needs', () => {
    // The browser SDK and the widget are bundled from sdk/ by `npm run build`: a pattern for a folder
    // above them drops them too.
    const needs = ['package.json', 'package-lock.json', 'src', 'scripts', 'tsconfig.json', 'sdk/browser/src', 'sdk/widget/src'];
    for (const needed of needs) {
      const itOrAbove = needed.split('/').map((_, i, parts) => parts.slice(0, i + 1).join('/'));
      expect(patterns.filter((p) => itOrAbove.includes(p.replace(/\/$/, '')) || p === '*' || p === '**')).toEqual([]);
    }
  });
});
