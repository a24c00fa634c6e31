import type { Namespace } from 'socket.io';
import { roomChannelNamer } from '../../src/cluster/socket-adapter';

// Which rooms' subscribers the intake may count: only where a room has a channel of its own, which
// a replica subscribes to exactly while it holds a socket of the room.
function namespaceWith(adapter: object): Namespace {
  return { adapter } as unknown as Namespace;
}

function sharded(subscriptionMode: string) {
  const sids = new Set(['socket-1']);
  return {
    opts: { subscriptionMode },
    channel: 'relay:sio#/ws/client#',
    shouldUseASeparateNamespace: (room: string) => subscriptionMode === 'dynamic' && !sids.has(room),
    dynamicChannel: (room: string) => `relay:sio#/ws/client#${room}#`,
  };
}

describe('roomChannelNamer', () => {
  it("names a room's own channel with the sharded adapter in dynamic mode; none for a socket's id", () => {
    const name = roomChannelNamer(namespaceWith(sharded('dynamic')));
    expect(name?.('client#bot#u1')).toBe('relay:sio#/ws/client#client#bot#u1#');
    expect(name?.('socket-1')).toBeNull();
  });

  it('gives nothing to count with any other mode or adapter', () => {
    expect(roomChannelNamer(namespaceWith(sharded('static')))).toBeNull();
    expect(roomChannelNamer(namespaceWith({ rooms: new Map() }))).toBeNull();
  });
});
