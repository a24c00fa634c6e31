// The one place that adapts testcontainers to the machines this tier runs on (Debian, root, a local
// dockerd from Debian's docker.io started by scripts/containers/host-setup.sh, NO registry reachable).
// Loaded by jest.containers.config.js (setupFiles) and by the global set-up, before testcontainers reads
// its environment. Every value can be overridden from the outside (e.g. on a machine with Ryuk).
//
//   TESTCONTAINERS_RYUK_DISABLED=true
//       Ryuk, the container that removes leftovers when a test process dies, is an image from Docker
//       Hub (testcontainers/ryuk) and cannot be pulled here. Without it, the suites remove what they
//       start in afterAll, and the global set-up removes containers, networks and volumes a killed
//       earlier run left behind (they carry RUN_LABEL or a `relay-hub-ct-` compose project name).
//   TESTCONTAINERS_HOST_OVERRIDE=127.0.0.1
//       testcontainers would answer `localhost` for a unix-socket engine; Node 24 may resolve that to
//       ::1 first, while the published ports are bound on IPv4. Mapped ports are reached on 127.0.0.1.
//   DOCKER_HOST (unset)
//       The engine's default unix socket /var/run/docker.sock.
//   DEBUG (unset)
//       DEBUG=testcontainers* shows builds, compose output and container logs.
//
// Pull policy: nothing in this tier pulls. Base images are local stand-ins (scripts/containers/
// stand-ins.sh) under the official tags, testcontainers' default policy only pulls a missing image,
// and the compose stack is started without --build or --pull, from images that exist.
process.env.TESTCONTAINERS_RYUK_DISABLED ??= 'true';
process.env.TESTCONTAINERS_HOST_OVERRIDE ??= '127.0.0.1';

/** Label on every container and network a suite of this tier creates. */
export const RUN_LABEL = 'org.relay-hub.container-tier';
/** Prefix of the compose project names of this tier. */
export const COMPOSE_PROJECT_PREFIX = 'relay-hub-ct-';
