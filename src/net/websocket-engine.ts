import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocket, WebSocketServer, type ServerOptions } from 'ws';
import { corkPerTurn } from './cork-per-turn';

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
 * and left in a write of its own again. {@link QueuedSendWebSocket} reports a frame sent once it
 * is queued on the open socket; the socket's errors still close the connection, which Engine.IO
 * hears as the transport's close. A broadcast's frame, encoded once for the whole room, Engine.IO
 * hands to `ws`'s frame sender directly (`_sender.sendFrame`), not to `send`: those are reported
 * the same way ({@link reportFramesQueued}), or a client's ack written after a reply to its room in
 * the same turn would wait for the next one.
 */
export class BatchingWebSocketServer extends WebSocketServer {
  constructor(options: ServerOptions) {
    super({ ...options, WebSocket: QueuedSendWebSocket });
  }

  /** Corks only an upgrade that Engine.IO accepted: its refusals write and destroy at once. */
  override handleUpgrade(
    request: IncomingMessage,
    socket: Duplex,
    head: Buffer,
    callback: (client: WebSocket, request: IncomingMessage) => void,
  ): void {
    corkPerTurn(socket);
    super.handleUpgrade(request, socket, head, (client, upgraded) => {
      reportFramesQueued(client);
      callback(client, upgraded);
    });
  }
}

type SendCallback = (err?: Error) => void;

/** A `ws` connection whose `send` reports success once the frame is queued on the open socket. */
class QueuedSendWebSocket extends WebSocket {
  override send(data: unknown, optionsOrCallback?: object | SendCallback, callback?: SendCallback): void {
    const options = typeof optionsOrCallback === 'function' ? {} : (optionsOrCallback ?? {});
    callback ??= typeof optionsOrCallback === 'function' ? (optionsOrCallback as SendCallback) : undefined;
    if (callback === undefined || this.readyState !== WebSocket.OPEN) {
      super.send(data as Buffer, options, callback);
      return;
    }
    super.send(data as Buffer, options);
    // After the microtasks of this run: a reply emitted in one of them joins the batch.
    process.nextTick(callback);
  }
}

/** The part of `ws`'s frame sender (8.x, `WebSocket#_sender`) that Engine.IO writes broadcasts with. */
interface FrameSender {
  sendFrame(list: unknown[], cb?: SendCallback): void;
}

/**
 * Makes the frames Engine.IO writes through `ws`'s sender report success once queued on the open
 * socket, as {@link QueuedSendWebSocket} does for `send`. test/integration/websocket-batching.test.ts
 * fails if `ws` stops keeping its sender there.
 */
function reportFramesQueued(client: WebSocket): void {
  const sender = (client as unknown as { _sender?: Partial<FrameSender> })._sender;
  // Without it broadcasts are written as before, one turn later: slower, never wrong.
  if (typeof sender?.sendFrame !== 'function') return;
  const sendFrame = sender.sendFrame.bind(sender);
  sender.sendFrame = (list, cb) => {
    if (cb === undefined || client.readyState !== WebSocket.OPEN) return sendFrame(list, cb);
    sendFrame(list);
    process.nextTick(cb);
  };
}
