import { createServer } from 'node:http';
import { Server } from 'socket.io';
import { namespacesOf } from '../../../src/internals/socket-io.internals';

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
});
