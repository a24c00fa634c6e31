import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { Server } from 'socket.io';
import { Events, Namespaces, type ClientMessage, type SendAck } from '../../../src/protocol';

const dist = join(__dirname, '..', '..', '..', 'dist', 'sdk');
const BUDGET = 16 * 1024;

/** Runs after the build (`npm test` builds first, or `node sdk/browser/src/build.mjs`). */
describe('embed bundle', () => {
  const read = (name: string) => {
    const file = join(dist, name);
    if (!existsSync(file)) throw new Error(`${file} is missing: run the build first (node sdk/browser/src/build.mjs)`);
    return readFileSync(file);
  };

  it(`keeps the ESM build within ${BUDGET / 1024} KB min+gzip, socket.io-client included`, () => {
    expect(gzipSync(read('embed.mjs'), { level: 9 }).length).toBeLessThanOrEqual(BUDGET);
  });

  it('ships without the debug logger, the polling and WebTransport transports or Node built-ins', () => {
    const unwanted = {
      debug: /getItem\(['"]debug['"]\)|DEBUG_COLORS/,
      polling: /XMLHttpRequest/,
      webtransport: /WebTransport\(/,
      node: /\brequire\(/,
    };
    for (const name of ['embed.mjs', 'embed.js']) {
      const code = read(name).toString();
      // Names, not the bundle, in the failure message.
      const found = Object.entries(unwanted)
        .filter(([, pattern]) => pattern.test(code))
        .map(([what]) => `${name}: ${what}`);
      expect(found).toEqual([]);
    }
  });

  it('exports the class from the ESM build and as the global RelayChat from the script build', () => {
    expect(read('embed.mjs').toString()).toMatch(/export\s*\{[^}]*\bas RelayChat\b/);
    const script = read('embed.js').toString();
    const scope: Record<string, unknown> = {};
    new Function('globalThis', script)(scope);
    type Global = (new (options: object) => { state: string; close(): void }) & { RelayChatError: unknown };
    const RelayChat = scope.RelayChat as Global;
    const chat = new RelayChat({ url: 'http://127.0.0.1:9', agentId: 'bot', token: 't' });
    chat.close();
    expect(chat.state).toBe('disconnected');
    expect(typeof RelayChat.RelayChatError).toBe('function');
  });

  it('connects and sends through the built ESM bundle over the native WebSocket', async () => {
    const http = createServer();
    const io = new Server(http, { transports: ['websocket'] });
    io.of(Namespaces.client).on('connection', (socket) => {
      // Like the hub: `session` right after connect; the SDK is `connected` (and flushes) only then.
      socket.emit(Events.session, { clientId: 'u1', agentId: 'bot', agentOnline: true, tokenExpiresAt: null });
      socket.on(Events.message, (msg: ClientMessage, ack: (res: SendAck) => void) => {
        ack({ ok: true, id: `echo:${msg.text}`, ts: 'now' });
      });
    });
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
    // A separate Node process loads the bundle as a browser would: ESM, global WebSocket, no `ws`.
    const script = `
      const { RelayChat } = await import(${JSON.stringify(join(dist, 'embed.mjs'))});
      const chat = new RelayChat({ url: ${JSON.stringify(url)}, agentId: 'bot', token: async () => 'jwt' });
      const ack = await chat.send('hi');
      chat.close();
      console.log(JSON.stringify(ack));`;
    try {
      const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], { timeout: 15_000 });
      expect(JSON.parse(stdout)).toEqual({ id: 'echo:hi', ts: 'now' });
    } finally {
      await io.close();
    }
  });
});
