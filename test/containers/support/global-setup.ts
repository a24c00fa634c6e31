// Once per `npm run test:containers`: wait for any other container-tier run on the machine
// (support/run-lock.ts), make the machine ready (scripts/containers/host-setup.sh: Debian
// packages, dockerd, Compose v2, stand-in base images), remove what a killed earlier run left behind,
// then build deploy/Dockerfile through testcontainers (BuildKit, the engine's built-in frontend) under
// the tag docker-compose.yml runs, so every suite and `docker compose up` use this build.
import './docker-env';
import { execFileSync } from 'node:child_process';
import { GenericContainer } from 'testcontainers';
import { COMPOSE_PROJECT_PREFIX, RUN_LABEL } from './docker-env';
import { HUB_IMAGE, ROOT } from './paths';
import { acquireRunLock } from './run-lock';

function docker(...args: string[]): string {
  return execFileSync('docker', args, { encoding: 'utf8' }).trim();
}

function lines(text: string): string[] {
  return text.split('\n').filter(Boolean);
}

function timed<T>(label: string, run: () => T): T {
  const started = Date.now();
  const result = run();
  const report = () => process.stderr.write(`[containers] ${label}: ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
  if (result instanceof Promise) return result.finally(report) as T;
  report();
  return result;
}

/** Containers, compose projects and networks of an earlier run that did not get to clean up. */
function removeLeftovers(): void {
  const containers = lines(docker('ps', '-aq', '--filter', `label=${RUN_LABEL}`));
  if (containers.length > 0) docker('rm', '-f', '-v', ...containers);
  const projects = new Set(
    lines(docker('ps', '-a', '--filter', 'label=com.docker.compose.project', '--format', '{{.Label "com.docker.compose.project"}}')).filter(
      (p) => p.startsWith(COMPOSE_PROJECT_PREFIX),
    ),
  );
  for (const project of projects) docker('compose', '-p', project, 'down', '-v', '--remove-orphans', '-t', '0');
  const networks = lines(docker('network', 'ls', '-q', '--filter', `label=${RUN_LABEL}`));
  if (networks.length > 0) docker('network', 'rm', ...networks);
}

export default async function globalSetup(): Promise<void> {
  process.stderr.write('\n');
  await timed('waited for other container-tier runs on this machine', () => acquireRunLock(ROOT));
  timed('host set-up (packages, dockerd, Compose v2, stand-in base images)', () =>
    execFileSync('bash', [`${ROOT}/scripts/containers/host-setup.sh`], { stdio: 'inherit' }),
  );
  timed('leftovers of earlier runs removed', removeLeftovers);
  await timed(`image ${HUB_IMAGE} built from deploy/Dockerfile`, () =>
    GenericContainer.fromDockerfile(ROOT, 'deploy/Dockerfile').withBuildkit().build(HUB_IMAGE, { deleteOnExit: false }),
  );
}
