import type { Socket as ServerSocket } from 'socket.io';
import type { Socket } from 'socket.io-client';
import { Namespaces } from '../../src/protocol';
import { agentSocket, clientSocket, connected, startHub, type TestHub } from '../helpers/hub';
import { mintToken, TEST_AGENT_KEY } from '../helpers/tokens';

/**
 * The handshake `auth` keeps only the protocol's fields (agent: apiKey, agentId; client: token,
 * agentId, lastMessageId): anything else a peer sends is not held for the socket's life.
 */
let t: TestHub;
beforeAll(async () => {
  t = await startHub({ HANDSHAKE_FAILURES_PER_MIN: '0' });
});
afterAll(() => t.close());

const JUNK = 'x'.repeat(100_000);

function serverSide(namespace: string, socket: Socket): ServerSocket {
  const found = t.hub.io.of(namespace).sockets.get(socket.id!);
  if (!found) throw new Error(`no server socket ${socket.id} on ${namespace}`);
  return found;
}

describe('handshake auth holds only the protocol fields', () => {
  it('/ws/client drops unknown fields (100 KB of junk among them) and keeps agentId and lastMessageId', async () => {
    const socket = clientSocket(t.url, {
      token: mintToken({ sub: 'u1' }),
      agentId: 'bot',
      lastMessageId: '00000000-0000-7000-8000-000000000000',
      junk: JUNK,
      nested: { deep: ['y'] },
    });
    try {
      await connected(socket);
      const { auth } = serverSide(Namespaces.client, socket).handshake;
      expect(Object.keys(auth).filter((k) => auth[k] !== undefined)).toEqual(['agentId', 'lastMessageId']);
      expect(Object.keys(auth).every((k) => ['token', 'agentId', 'lastMessageId'].includes(k))).toBe(true);
      expect(JSON.stringify(auth).length).toBeLessThan(200);
    } finally {
      socket.disconnect();
    }
  });

  it('/ws/agent drops unknown fields and keeps agentId', async () => {
    const socket = agentSocket(t.url, { apiKey: TEST_AGENT_KEY, agentId: 'bot', junk: JUNK, extra: 1 });
    try {
      await connected(socket);
      const { auth } = serverSide(Namespaces.agent, socket).handshake;
      expect(Object.keys(auth).filter((k) => auth[k] !== undefined)).toEqual(['agentId']);
      expect(Object.keys(auth).every((k) => ['apiKey', 'agentId'].includes(k))).toBe(true);
    } finally {
      socket.disconnect();
    }
  });

  it('a client without lastMessageId keeps only agentId, and still connects normally', async () => {
    const socket = clientSocket(t.url, { token: mintToken({ sub: 'u2' }), agentId: 'bot', __proto__x: JUNK });
    try {
      await connected(socket);
      const { auth } = serverSide(Namespaces.client, socket).handshake;
      expect(Object.keys(auth).filter((k) => auth[k] !== undefined)).toEqual(['agentId']);
    } finally {
      socket.disconnect();
    }
  });
});
