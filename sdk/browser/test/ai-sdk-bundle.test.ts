import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { Server } from 'socket.io';
import { Events, Namespaces, type ClientInboundMessage, type ClientMessage, type SendAck } from '../../../src/protocol';

const dist = join(__dirname, '..', '..', '..', 'dist', 'sdk');

/** The `./ai-sdk` subpath as built (`node sdk/browser/src/build.mjs`): dist/sdk/ai-sdk.mjs beside embed.mjs. */
describe('ai-sdk bundle', () => {
  const read = (name: string) => {
    const file = join(dist, name);
    if (!existsSync(file)) throw new Error(`${file} is missing: run the build first (node sdk/browser/src/build.mjs)`);
    return readFileSync(file).toString();
  };

  it('imports RelayChat from the embed.mjs beside it instead of bundling a second SDK', () => {
    const code = read('ai-sdk.mjs');
    expect(code).toMatch(/import\s*\{\s*RelayChat as \w+\s*\}\s*from\s*"\.\/embed\.mjs"/);
    expect(code).not.toMatch(/engine\.io|EIO=/);
    expect(gzipSync(code, { level: 9 }).length).toBeLessThan(4 * 1024);
  });

  it('streams a bot reply as UI message chunks through the built module, in a plain Node process', async () => {
    const http = createServer();
    const io = new Server(http, { transports: ['websocket'] });
    io.of(Namespaces.client).on('connection', (socket) => {
      socket.emit(Events.session, { clientId: 'u1', agentId: 'bot', agentOnline: true, tokenExpiresAt: null });
      socket.on(Events.message, (msg: ClientMessage, ack: (res: SendAck) => void) => {
        ack({ ok: true, id: 'm-user', ts: 'now' });
        const reply: ClientInboundMessage = {
          id: 'm-bot',
          ts: 'now',
          agentId: 'bot',
          author: 'agent',
          text: `echo: ${msg.text}`,
          replyTo: 'm-user',
        };
        socket.emit(Events.message, reply);
      });
    });
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
    const script = `
      const { RelayChatTransport } = await import(${JSON.stringify(join(dist, 'ai-sdk.mjs'))});
      const transport = new RelayChatTransport({ url: ${JSON.stringify(url)}, agentId: 'bot', token: async () => 'jwt', persist: false });
      const stream = await transport.sendMessages({
        trigger: 'submit-message', chatId: 'c', messageId: undefined, abortSignal: undefined,
        messages: [{ id: 'local', role: 'user', parts: [{ type: 'text', text: 'hi' }] }],
      });
      const chunks = [];
      for await (const chunk of stream) chunks.push(chunk);
      transport.close();
      console.log(JSON.stringify(chunks));`;
    try {
      const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], { timeout: 15_000 });
      expect(JSON.parse(stdout)).toEqual([
        { type: 'start', messageId: 'm-bot' },
        { type: 'text-start', id: 'm-bot:0' },
        { type: 'text-delta', id: 'm-bot:0', delta: 'echo: hi' },
        { type: 'text-end', id: 'm-bot:0' },
        { type: 'finish' },
      ]);
    } finally {
      await io.close();
    }
  });
});
