import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server } from 'socket.io';
import { Namespaces, type AgentInboundMessage } from '../../src/protocol';
import { RelayAgent, RelayAgentError } from '../../src/sdk/agent';
import { startHub, type TestHub } from '../helpers/hub';
import { TEST_AGENT_KEY } from '../helpers/tokens';

let t: TestHub;
beforeAll(async () => {
  t = await startHub({ MAX_MESSAGE_BYTES: '100' });
});
afterAll(() => t.close());

it('rejects connect() with the code of a terminal refusal and stops', async () => {
  const agent = new RelayAgent({ url: t.url, apiKey: 'wrong', agentId: 'bot' });
  const errors: Error[] = [];
  agent.on('error', (e) => errors.push(e));
  await expect(agent.connect()).rejects.toEqual(expect.objectContaining({ code: 'API_KEY_INVALID' }));
  expect(errors[0]).toBeInstanceOf(RelayAgentError);
  expect(agent.connected).toBe(false);
});

it('turns error acks into RelayAgentError with the code', async () => {
  const agent = await t.agent('sdk-errors');
  await expect(agent.reply('*', 'x'.repeat(101))).rejects.toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
  await expect(agent.debug('y'.repeat(150))).rejects.toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
});

it('reconnects by itself after the transport drops', async () => {
  const agent = await t.agent('sdk-reconnect');
  const disconnected = new Promise<string>((resolve) => agent.once('disconnect', resolve));
  const reconnected = new Promise<void>((resolve) => agent.once('connect', resolve));
  for (const socket of t.hub.relay.namespaces.agent.sockets.values()) {
    if ((socket.data as { agentId: string }).agentId === 'sdk-reconnect') socket.conn.close();
  }
  expect(await disconnected).toBe('transport close');
  await reconnected;
  expect((await t.hub.store.presence.getAgent('sdk-reconnect')).runtimes).toBe(1);
});

it('acks every delivery but hands each message id to the handler once', async () => {
  // A bare Socket.IO peer that redelivers, as the hub does after a lost ack.
  const httpServer = createServer();
  const io = new Server(httpServer);
  await new Promise<void>((resolve) => httpServer.listen(0, '127.0.0.1', resolve));
  const message: AgentInboundMessage = { id: 'm-1', ts: new Date().toISOString(), agentId: 'bot', from: 'u', text: 'hi' };
  const acks = new Promise<unknown[]>((resolve) =>
    io.of(Namespaces.agent).on('connection', async (socket) => {
      resolve([
        await socket.emitWithAck('message', message),
        await socket.emitWithAck('message', message),
        await socket.emitWithAck('message', { ...message, id: 'm-2' }),
      ]);
    }),
  );
  const agent = new RelayAgent({
    url: `http://127.0.0.1:${(httpServer.address() as AddressInfo).port}`,
    apiKey: TEST_AGENT_KEY,
    agentId: 'bot',
  });
  const handled: string[] = [];
  const allHandled = new Promise<void>((resolve) =>
    agent.onMessage((m) => {
      handled.push(m.id);
      if (m.id === 'm-2') resolve();
    }),
  );
  await agent.connect();
  await allHandled;
  expect(await acks).toEqual([{ ok: true }, { ok: true }, { ok: true }]);
  expect(handled).toEqual(['m-1', 'm-2']);
  agent.close();
  await new Promise((resolve) => io.close(resolve));
});

it('marks refused replies retryable as the protocol catalogue says (SERVER_UNAVAILABLE: log not written)', async () => {
  // A bare Socket.IO peer: a hub whose conversation log is unreachable answers every reply so.
  const httpServer = createServer();
  const io = new Server(httpServer);
  await new Promise<void>((resolve) => httpServer.listen(0, '127.0.0.1', resolve));
  io.of(Namespaces.agent).on('connection', (socket) => {
    socket.on('reply', (payload: { text: string }, ack: (res: unknown) => void) => {
      const code = payload.text === 'log down' ? 'SERVER_UNAVAILABLE' : 'INVALID_PAYLOAD';
      ack({ ok: false, error: { code, message: code } });
    });
    socket.on('debug', (_payload: unknown, ack: (res: unknown) => void) =>
      ack({ ok: false, error: { code: 'RATE_LIMITED', message: 'slow' } }),
    );
  });
  const agent = new RelayAgent({
    url: `http://127.0.0.1:${(httpServer.address() as AddressInfo).port}`,
    apiKey: TEST_AGENT_KEY,
    agentId: 'bot',
  });
  try {
    await agent.connect();
    await expect(agent.reply('u1', 'log down')).rejects.toMatchObject({ code: 'SERVER_UNAVAILABLE', retryable: true });
    await expect(agent.reply('u1', 'bad')).rejects.toMatchObject({ code: 'INVALID_PAYLOAD', retryable: false });
    const refused = agent.debug('trace');
    await expect(refused).rejects.toBeInstanceOf(RelayAgentError);
    await expect(refused).rejects.toMatchObject({ code: 'RATE_LIMITED', retryable: true });
  } finally {
    agent.close();
    await new Promise((resolve) => io.close(resolve));
  }
});
