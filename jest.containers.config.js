/**
 * The container tier: `npm run test:containers`. The built image, `docker compose up` of the shipped
 * file and a testcontainers cluster, on a real Docker engine. Separate from jest.config.js because it
 * needs root, a Docker engine and minutes rather than seconds; its spec files are named *.spec.ts so
 * the main config (which runs *.test.ts) never picks them up.
 * @type {import('jest').Config}
 */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test/containers'],
  testMatch: ['**/*.spec.ts'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.test.json' }],
  },
  // Host set-up (engine, Compose v2, stand-in base images) and the image build, once per run.
  globalSetup: '<rootDir>/test/containers/support/global-setup.ts',
  // Frees the machine-wide run lock the set-up took (support/run-lock.ts).
  globalTeardown: '<rootDir>/test/containers/support/global-teardown.ts',
  // testcontainers settings for this machine kind, before any test imports testcontainers.
  setupFiles: ['<rootDir>/test/containers/support/docker-env.ts'],
  // One suite at a time: a compose stack of five containers and a cluster on two cores.
  maxWorkers: 1,
  testTimeout: 120_000,
  slowTestThreshold: 60,
};
