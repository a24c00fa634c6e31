/**
 * Loaded before each integration and cluster test file (jest.config.js): a failing test runs once
 * more, its first failure printed. Those tiers time failovers, floods and budgets on real processes,
 * and on two cores shared by three jest workers a few have missed their time by seconds and passed
 * alone (docs/testing.md, "Load-sensitive tests"); a test that fails twice fails the run.
 */
jest.retryTimes(1, { logErrorsBeforeRetry: true });
