import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { configSchema } from '../../src/config/config.schema';
import { AckCodes, HandshakeCodes, ProblemCodes, SessionClosedCodes } from '../../src/protocol';

const readme = readFileSync(join(__dirname, '..', '..', 'README.md'), 'utf8');

describe('README documents', () => {
  it.each(Object.keys(configSchema))('config key %s', (key) => {
    expect(readme).toContain(`| \`${key}\` |`);
  });

  it.each(Object.entries(HandshakeCodes))('handshake code %s with its retryability', (code, { retryable }) => {
    expect(readme).toContain(`| \`${code}\`${retryable ? ' (R)' : ''} |`);
  });

  it.each([...Object.keys(AckCodes), ...Object.keys(SessionClosedCodes)])('ack / session:closed code %s', (code) => {
    expect(readme).toContain(`\`${code}\``);
  });

  it.each(Object.entries(ProblemCodes))('REST problem code %s with its status', (code, { status }) => {
    expect(readme).toContain(`| \`${code}\` | ${status} |`);
  });
});
