import { Writable } from 'node:stream';
import { configFrom } from '../../src/config/config';
import { createHub, type Hub } from '../../src/hub/hub';
import { createLogger } from '../../src/logging/logger';
import { clientSocket, connected } from '../helpers/hub';
import { mintToken, TEST_ADMIN_JWT_SECRET, TEST_AGENT_KEY, TEST_JWT_SECRET } from '../helpers/tokens';

const EMAIL = 'ann.personal@example.com';

/** A hub on port 0 whose info-level log lines are collected. */
async function hubWithLogs(logPersonalData: string): Promise<{ hub: Hub; url: string; lines: string[] }> {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      done();
    },
  });
  const config = configFrom({
    NODE_ENV: 'test',
    LOG_LEVEL: 'info',
    JWT_SECRET: TEST_JWT_SECRET,
    ADMIN_JWT_SECRET: TEST_ADMIN_JWT_SECRET,
    AGENT_API_KEYS: TEST_AGENT_KEY,
    DEMO_ENABLED: 'false',
    LOG_PERSONAL_DATA: logPersonalData,
    OPENAPI_SPEC_FILE: '/dev/null',
  });
  const hub = await createHub(config, { logger: createLogger('info', sink) });
  const url = `http://127.0.0.1:${await hub.listen(0, '127.0.0.1')}`;
  return { hub, url, lines };
}

/** Connects, chats (message, refresh, rate limit...), disconnects: every line a session can write. */
async function session(url: string): Promise<void> {
  const socket = clientSocket(url, { token: mintToken({ sub: 'ann', email: EMAIL }), agentId: 'bot' });
  await connected(socket);
  await socket.timeout(5000).emitWithAck('message', { clientMessageId: '1', text: 'hi' });
  await socket.timeout(5000).emitWithAck('auth:refresh', { token: mintToken({ sub: 'ann', email: EMAIL }) });
  const gone = new Promise((resolve) => socket.once('disconnect', resolve));
  socket.disconnect();
  await gone;
}

describe('personal data in logs (issue 10)', () => {
  it('writes the email on the connect line only', async () => {
    const { hub, url, lines } = await hubWithLogs('true');
    try {
      await session(url);
      await new Promise((resolve) => setImmediate(resolve));
      const withEmail = lines.filter((l) => l.includes(EMAIL));
      expect(withEmail).toHaveLength(1);
      expect(JSON.parse(withEmail[0])).toMatchObject({ msg: 'handshake accepted', email: EMAIL, clientId: 'ann' });
      expect(lines.filter((l) => l.includes('"clientId":"ann"')).length).toBeGreaterThan(1);
    } finally {
      await hub.close();
    }
  });

  it('writes it nowhere with LOG_PERSONAL_DATA=false', async () => {
    const { hub, url, lines } = await hubWithLogs('false');
    try {
      await session(url);
      expect(lines.some((l) => l.includes('handshake accepted') && l.includes('"clientId":"ann"'))).toBe(true);
      expect(lines.filter((l) => l.includes(EMAIL))).toEqual([]);
    } finally {
      await hub.close();
    }
  });
});
