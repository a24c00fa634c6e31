import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocket, WebSocketServer } from 'ws';
import { frameSenderOf, type FrameSender, type SendCallback } from '../internals/ws.internals';
import { corkPerTurn, type TurnEnd } from './cork-per-turn';

/**
 * The WebSocket server under Engine.IO (its `wsEngine` option): `ws`'s server, with the writes each
 * connection makes within one turn of the event loop leaving in one system call.
 *
 * A relayed message causes several frames on one connection in one turn: the sender's ack and the
 * bot's reply to a client, or the messages of several clients to their bot's runtime. Each left in
 * a write of its own, the largest single cost of a round trip (a third of the hub's CPU). Corking
 * the socket for the turn ({@link corkPerTurn}) is not enough by itself: Engine.IO hands a
 * connection its next packet only once `ws` reports the previous one written, which a corked
 * socket does at the end of the turn, so every packet after the first waited for the next turn
 * and left in a write of its own again. {@link reportFramesQueued} makes `ws` report a frame sent
 * once it is queued on the open socket; the socket's errors still close the connection, which
 * Engine.IO hears as the transport's close.
 *
 * Engine.IO thus never holds frames back: what a peer does not read piles up in its TCP socket's
 * buffer. {@link boundedWebSocketServer} bounds that buffer (MAX_SOCKET_BUFFER_BYTES).
 */
export class BatchingWebSocketServer extends WebSocketServer {
  /** Where connections whose peer stopped reading are reported; none here (see {@link boundedWebSocketServer}). */
  protected get sendLimit(): SendBufferLimit | null {
    return null;
  }

  /** Corks only an upgrade that Engine.IO accepted: its refusals write and destroy at once. */
  override handleUpgrade(
    request: IncomingMessage,
    socket: Duplex,
    head: Buffer,
    callback: (client: WebSocket, request: IncomingMessage) => void,
  ): void {
    const limit = this.sendLimit;
    const check = limit && limit.checkAboveBytes > 0 ? new BacklogCheck(limit) : undefined;
    // Checked once a turn, not once a frame: the frames of a turn cost nothing more than before.
    corkPerTurn(socket, check);
    super.handleUpgrade(request, socket, head, (upgradedClient, upgraded) => {
      if (check) check.client = upgradedClient;
      reportFramesQueued(upgradedClient);
      callback(upgradedClient, upgraded);
    });
  }
}

/**
 * The check {@link corkPerTurn} runs at the end of each turn of one connection, and the connection
 * it reports once upgraded. An object, not a closure made in `handleUpgrade`: a closure keeps its
 * whole scope alive, and the check lives as long as the connection, so one made there kept the
 * upgrade's `callback`, and through Engine.IO's the upgrade request (headers, query, the stand-in
 * response: about 1.3 KB per idle client) for the connection's whole life.
 */
class BacklogCheck implements TurnEnd {
  client: WebSocket | undefined;

  constructor(private readonly limit: SendBufferLimit) {}

  atTurnEnd(backlog: number): void {
    if (backlog > this.limit.checkAboveBytes && this.client) this.limit.overflowed(this.client, backlog);
  }
}

/** The bounds on what one websocket peer may leave unread, and who closes the peers past theirs. */
export interface SendBufferLimit {
  /** The lowest bound any peer has, in bytes; 0 = every peer unlimited. */
  readonly checkAboveBytes: number;
  /** Called (once a turn) for a connection that had more than `checkAboveBytes` queued; closes it if that is past its own bound. */
  overflowed(client: WebSocket, queued: number): void;
}

/**
 * A {@link BatchingWebSocketServer} that reports connections whose peer leaves more than
 * `limit.checkAboveBytes` unsent from one turn to the next. Engine.IO constructs its `wsEngine` itself, so
 * the limit comes with the class.
 */
export function boundedWebSocketServer(limit: SendBufferLimit): typeof BatchingWebSocketServer {
  return class BoundedWebSocketServer extends BatchingWebSocketServer {
    protected override get sendLimit(): SendBufferLimit {
      return limit;
    }
  };
}

/**
 * Makes every frame of `client` report success once it is queued on the open socket, not once the
 * corked write completes. One place serves both ways Engine.IO writes: `WebSocket#send`, which ends
 * in the sender's `sendFrame`, and a broadcast's frame, encoded once for the whole room, which it
 * hands to `sendFrame` directly (otherwise a client's ack written after a reply to its room in the
 * same turn would wait for the next one). The sender is `ws`'s private member
 * ({@link frameSenderOf}); test/integration/internals/ws.internals.test.ts and
 * test/integration/websocket-batching.test.ts fail if `ws` stops keeping it there.
 */
function reportFramesQueued(client: WebSocket): void {
  const sender = frameSenderOf(client) as QueuedSender | null;
  // Without it frames are written as before, one turn later: slower, never wrong.
  if (sender === null) return;
  // The sender's own sendFrame and its connection, on the sender: one shared function for every
  // connection instead of a closure and a bound function each (idle clients are most of them).
  // Unbound on purpose: sendFrameQueued calls it with the sender as `this`.
  // eslint-disable-next-line @typescript-eslint/unbound-method
  sender[kQueued] = { sendFrame: sender.sendFrame, client };
  sender.sendFrame = sendFrameQueued;
}

const kQueued = Symbol('reportFramesQueued');

type QueuedSender = FrameSender & { [kQueued]: { readonly sendFrame: FrameSender['sendFrame']; readonly client: WebSocket } };

function sendFrameQueued(this: QueuedSender, list: unknown[], cb?: SendCallback): void {
  const { sendFrame, client } = this[kQueued];
  if (cb === undefined || client.readyState !== WebSocket.OPEN) return sendFrame.call(this, list, cb);
  sendFrame.call(this, list);
  // After the microtasks of this run: a frame sent in one of them joins the batch.
  process.nextTick(cb);
}
