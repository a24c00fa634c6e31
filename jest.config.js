/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.test.json' }],
  },
  testTimeout: 30000,
  maxWorkers: 2,
  // Hub processes, Redis servers and browsers are started by the tests themselves; a leaked handle
  // should fail loudly in CI rather than hang.
  forceExit: false,
};
