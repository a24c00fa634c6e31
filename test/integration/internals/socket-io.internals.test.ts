import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server, type Socket } from 'socket.io';
import { io as connect } from 'socket.io-client';
import { emitJsonWithAck, namespacesOf } from '../../../src/internals/socket-io.internals';

// src/internals/socket-io.internals.ts reads Socket.IO's private namespace map: it must list every
// namespace the server created, the main one included.
describe('socket.io internals', () => {
  it('Server#_nsps lists every namespace, `/` included', async () => {
    const io = new Server(createServer());
    const agent = io.of('/ws/agent');
    const client = io.of('/ws/client');
    try {
      expect(namespacesOf(io)).toEqual(expect.arrayContaining([io.of('/'), agent, client]));
      expect(
        namespacesOf(io)
          .map((nsp) => nsp.name)
          .sort(),
      ).toEqual(['/', '/ws/agent', '/ws/client']);
    } finally {
      await new Promise((resolve) => io.close(resolve));
    }
  });

  describe('emitJsonWithAck', () => {
    let io: Server;
    let url: string;
    beforeAll(async () => {
      const http = createServer();
      io = new Server(http);
      await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
      url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/ws/agent`;
    });
    afterAll(() => new Promise((resolve) => io.close(resolve)));

    /** A connected pair on /ws/agent: the server's socket and the client. */
    async function pair() {
      const serverSide = new Promise<Socket>((resolve) => io.of('/ws/agent').once('connection', resolve));
      const client = connect(url, { transports: ['websocket'], forceNew: true });
      return { server: await serverSide, client };
    }

    it("writes the frame Socket.IO's own emit with an ack writes, and settles on the peer's ack", async () => {
      const { server, client } = await pair();
      try {
        const frames: string[] = [];
        server.conn.on('packetCreate', (packet: { data?: unknown }) => frames.push(String(packet.data)));
        const value = { id: 'm1', text: 'grüße "quoted" \u2028 👋', data: { n: [1, null] } };
        const received: unknown[] = [];
        client.on('message', (m: unknown, ack: (r: unknown) => void) => {
          received.push(m);
          ack({ ok: true });
        });
        const viaEmit = new Promise<Error | null>((resolve) =>
          server.timeout(5000).emit('message', value, (err: Error | null) => resolve(err)),
        );
        expect(await viaEmit).toBeNull();
        const viaJson = new Promise<Error | null>((resolve) => emitJsonWithAck(server, 'message', JSON.stringify(value), 5000, resolve));
        expect(await viaJson).toBeNull();
        expect(received).toEqual([value, value]);
        // The same frame but for the ack id, which is the next one.
        expect(frames).toHaveLength(2);
        const id = Number(/^2\/ws\/agent,(\d+)\[/.exec(frames[0])![1]);
        expect(frames[1]).toBe(frames[0].replace(`,${id}[`, `,${id + 1}[`));
      } finally {
        client.disconnect();
      }
    });

    it('gives the ack an error once the timeout passes without one', async () => {
      const { server, client } = await pair();
      try {
        client.on('message', () => {});
        const started = Date.now();
        const err = await new Promise<Error | null>((resolve) => emitJsonWithAck(server, 'message', '{"id":"m"}', 200, resolve));
        expect(err).toBeInstanceOf(Error);
        expect(Date.now() - started).toBeGreaterThanOrEqual(190);
      } finally {
        client.disconnect();
      }
    });
  });
});
