/**
 * The test tiers, one jest project each (`npm run test:<tier>` runs one, `jest` all of them):
 * unit (pure functions, static checks of deploy files, layer rules; starts nothing), integration (a
 * real hub on port 0 with real clients, stores on real Redis, the OpenAPI contract, library
 * internals), cluster (hub processes on one real Redis behind nginx; nginx before stand-in hubs), browser (real Chromium), ops (the Helm chart rendered, linted and
 * validated by real Helm; the alert rules under promtool; the metric names of the rules and the
 * dashboard against a running hub). The container tier has its own config
 * (jest.containers.config.js).
 */
// The AI SDK (`ai`, `@ai-sdk/*`) and what it imports ship as ES modules only; jest loads modules as
// CommonJS, so ts-jest compiles those packages too (docs/ai-sdk.md#tests).
const ESM_PACKAGES = '(ai|@ai-sdk/[^/]+|@workflow/serde|@standard-schema/spec|eventsource-parser|zod)';

const base = {
  testEnvironment: 'node',
  testMatch: ['**/*.test.ts'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.test.json' }],
    [`/node_modules/${ESM_PACKAGES}/.+\\.js$`]: ['ts-jest', { tsconfig: 'tsconfig.test.json' }],
  },
  transformIgnorePatterns: [`/node_modules/(?!${ESM_PACKAGES}/)`],
};

/** Timing-sensitive tiers run a failing test once more (test/helpers/retry-once.ts). */
const RETRY_ONCE = '<rootDir>/test/helpers/retry-once.ts';

/** @type {import('jest').Config} */
module.exports = {
  projects: [
    // The SDKs keep their tests beside them (sdk/<name>/test): `*.browser.test.ts` runs in the browser
    // tier, the rest in the unit tier.
    {
      ...base,
      displayName: 'unit',
      roots: ['<rootDir>/test/unit', '<rootDir>/sdk'],
      testPathIgnorePatterns: ['/node_modules/', '[.]browser[.]test[.]ts$'],
    },
    { ...base, displayName: 'integration', roots: ['<rootDir>/test/integration'], setupFilesAfterEnv: [RETRY_ONCE] },
    { ...base, displayName: 'cluster', roots: ['<rootDir>/test/cluster'], setupFilesAfterEnv: [RETRY_ONCE] },
    {
      ...base,
      displayName: 'browser',
      roots: ['<rootDir>/test/browser', '<rootDir>/sdk'],
      testMatch: ['<rootDir>/test/browser/**/*.test.ts', '**/*.browser.test.ts'],
    },
    { ...base, displayName: 'ops', roots: ['<rootDir>/test/ops'] },
  ],
  testTimeout: 30000,
  // Three test files at a time on CI's two cores: a file spends much of its time waiting (on hubs,
  // Redis failovers, Chromium, timers), and with two workers the cores were busy about 60% of the
  // run (docs/testing.md).
  maxWorkers: 3,
  // Hub processes, Redis servers and browsers are started by the tests themselves; a leaked handle
  // should fail loudly in CI rather than hang.
  forceExit: false,
};
