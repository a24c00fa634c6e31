// The relay-hub image (deploy/Dockerfile, built by the global set-up) run the way the chart runs it:
// non-root, read-only root filesystem with a tmpfs on /tmp, no capabilities, an init as PID 1.
//
// The base images under it (node:24-bookworm-slim here) are LOCAL STAND-INS for the official Docker
// Hub images, made by scripts/containers/stand-ins.sh from Debian packages and the npm registry's Node
// binary, because no registry is reachable on the machines this tier runs on. With a registry, the
// same tests run on the official images.
import { execFileSync } from 'node:child_process';
import { GenericContainer, Wait, getContainerRuntimeClient, type StartedTestContainer } from 'testcontainers';
import { RUN_LABEL } from './support/docker-env';
import { HUB_IMAGE } from './support/paths';
import { chatToken, connectAgent, hubSecrets, connectClient, type ChatClient } from './support/peers';

const GRACE_MS = 4000;

/**
 * GenericContainer with the host settings testcontainers has no builder method for (set through the
 * protected `hostConfig` that testcontainers' own modules extend): read-only root filesystem and
 * Docker's init (tini) as PID 1, as `docker run --read-only --init` and compose `init: true` do.
 */
class HardenedContainer extends GenericContainer {
  constructor(image: string) {
    super(image);
    this.hostConfig.ReadonlyRootfs = true;
    this.hostConfig.Init = true;
  }
}

describe(`image ${HUB_IMAGE}`, () => {
  const secrets = hubSecrets();
  let hub: StartedTestContainer;
  let url: string;

  beforeAll(async () => {
    hub = await new HardenedContainer(HUB_IMAGE)
      .withLabels({ [RUN_LABEL]: 'image' })
      // No REDIS_URL: the embedded single replica; production mode, so the secrets are required.
      .withEnvironment({ ...secrets, SHUTDOWN_GRACE_MS: String(GRACE_MS), LOG_LEVEL: 'info' })
      .withTmpFs({ '/tmp': 'rw,noexec,nosuid,size=16m' })
      .withDroppedCapabilities('ALL')
      .withSecurityOpt('no-new-privileges')
      .withExposedPorts(3000)
      // Readiness for the test, and the image's own HEALTHCHECK (liveness) turning healthy.
      .withWaitStrategy(Wait.forAll([Wait.forHttp('/health/ready', 3000), Wait.forHealthCheck()]))
      .withStartupTimeout(60_000)
      .start();
    url = `http://${hub.getHost()}:${hub.getMappedPort(3000)}`;
  });

  afterAll(async () => {
    if (!hub) return;
    // The drain test stops the container without removing it (its exit code is inspected after), and
    // a stopped StartedTestContainer neither stops nor removes again: docker rm -f, running or not.
    execFileSync('docker', ['rm', '-f', '-v', hub.getId()]);
  });

  const inspect = async () => {
    const client = await getContainerRuntimeClient();
    return client.container.inspect(client.container.getById(hub.getId()));
  };

  test('runs as the unprivileged node user (uid 1000) under an init', async () => {
    const info = await inspect();
    expect(info.Config.User).toBe('node');
    expect(info.HostConfig.Init).toBe(true);
    expect(info.HostConfig.ReadonlyRootfs).toBe(true);
    expect((await hub.exec(['id', '-u'])).output.trim()).toBe('1000');
    // PID 1 is the init, node its child: signals are forwarded and zombies reaped.
    expect((await hub.exec(['cat', '/proc/1/comm'])).output.trim()).not.toBe('node');
  });

  test('answers /health/ready and serves the API with only /tmp writable', async () => {
    expect((await fetch(`${url}/health/ready`)).status).toBe(200);
    const spec = (await (await fetch(`${url}/api-json`)).json()) as { openapi: string };
    expect(spec.openapi).toMatch(/^3\./);

    const write = await hub.exec(['sh', '-c', 'touch /app/probe']);
    expect(write.exitCode).not.toBe(0);
    expect(write.output).toMatch(/Read-only file system/);
    // The spec the hub writes on start (OPENAPI_SPEC_FILE) landed on the tmpfs.
    expect((await hub.exec(['sh', '-c', 'test -s "$OPENAPI_SPEC_FILE" && echo "$OPENAPI_SPEC_FILE"'])).output.trim()).toBe(
      '/tmp/openapi.json',
    );
    expect((await hub.exec(['sh', '-c', 'grep " /tmp " /proc/mounts'])).output).toMatch(/^tmpfs \/tmp tmpfs /);
  });

  test('drains on docker stop within SHUTDOWN_GRACE_MS and exits 0', async () => {
    const agent = await connectAgent(url, secrets.AGENT_API_KEYS, 'image-bot', { echo: true });
    const clients: ChatClient[] = [];
    for (let i = 0; i < 3; i++) clients.push(await connectClient(url, chatToken(secrets.JWT_SECRET, `user-${i}`), 'image-bot'));
    const ack = await clients[0].send('before stop');
    expect(ack.ok).toBe(true);
    const reasons = [agent.socket, ...clients.map((c) => c.socket)].map(
      (socket) => new Promise<string>((resolve) => socket.once('disconnect', (reason) => resolve(reason))),
    );

    const started = Date.now();
    // docker stop: SIGTERM, SIGKILL only after 30 s (compose's stop_grace_period for the hubs).
    await hub.stop({ timeout: 30_000, remove: false });
    const tookMs = Date.now() - started;

    const state = (await inspect()).State;
    expect({ exitCode: state.ExitCode, oomKilled: state.OOMKilled }).toEqual({ exitCode: 0, oomKilled: false });
    expect(tookMs).toBeLessThan(GRACE_MS + 5000);
    // Transports closed by the drain, never a server-side disconnect (which would stop reconnection).
    expect(new Set(await Promise.all(reasons))).toEqual(new Set(['transport close']));
    const logs = await new Promise<string>((resolve, reject) => {
      let text = '';
      hub.logs().then(
        (stream) =>
          stream
            .on('data', (c) => (text += c))
            .on('end', () => resolve(text))
            .on('error', reject),
        reject,
      );
    });
    expect(logs).toMatch(/draining/);
  });
});
