import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import WebSocket, { WebSocketServer } from 'ws';
import { frameSenderOf, type FrameSender } from '../../../src/internals/ws.internals';

// src/internals/ws.internals.ts reads `ws`'s private frame sender: every frame a connection sends,
// by `send` and by the pre-encoded frames Engine.IO hands a broadcast's sockets, must go through its
// `sendFrame(list, cb)` with the callback ws reports the write with.
describe('ws internals', () => {
  it('WebSocket#_sender exists and every frame of `send` goes through its sendFrame, callback included', async () => {
    const httpServer = createServer();
    const wss = new WebSocketServer({ server: httpServer });
    await new Promise<void>((resolve) => httpServer.listen(0, '127.0.0.1', resolve));
    const serverSide = new Promise<WebSocket>((resolve) => wss.once('connection', resolve));
    const client = new WebSocket(`ws://127.0.0.1:${(httpServer.address() as AddressInfo).port}`);
    const opened = new Promise((resolve) => client.once('open', resolve));
    try {
      const socket = await serverSide;
      await opened;
      const sender = frameSenderOf(socket);
      expect(sender).not.toBeNull();
      const seen: boolean[] = [];
      const sendFrame = (sender as FrameSender).sendFrame.bind(sender);
      (sender as FrameSender).sendFrame = (list, cb) => {
        seen.push(typeof cb === 'function');
        sendFrame(list, cb);
      };
      const received = new Promise((resolve) => client.once('message', (data) => resolve(String(data))));
      // ws reports a written frame with no error (null or undefined, as its versions differ).
      const written = new Promise<Error | null>((resolve) => socket.send('hello', (err) => resolve(err ?? null)));
      expect(await written).toBeNull();
      expect(await received).toBe('hello');
      expect(seen).toEqual([true]);
    } finally {
      client.terminate();
      wss.close();
      await new Promise((resolve) => httpServer.close(resolve));
    }
  });
});
