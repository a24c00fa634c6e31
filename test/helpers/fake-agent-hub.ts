import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server, type Socket as ServerSocket } from 'socket.io';
import {
  Events,
  Namespaces,
  type ActivityUpdate,
  type AgentInboundMessage,
  type OkAck,
  type SendAck,
  type StreamDelta,
  type StreamDeltaAck,
  type StreamEnd,
  type StreamStart,
} from '../../src/protocol';
import { RelayAgent, type RelayAgentOptions } from '../../src/sdk/agent';
import { TEST_AGENT_KEY } from './tokens';

/** One `stream:delta` as the fake hub received it. */
export interface ReceivedDelta extends StreamDelta {
  /** Whether the runtime asked for an ack. */
  asked: boolean;
  /** `Date.now()` at receipt. */
  at: number;
}

/** One stream as the fake hub saw it. */
export interface FakeStream {
  start: StreamStart;
  deltas: ReceivedDelta[];
  end?: StreamEnd;
  /** The deltas' text, appended in arrival order. */
  text: string;
}

/**
 * A stand-in for the hub's agent namespace: the agent SDK's streams run against a real Socket.IO
 * server whose acks each test scripts (slow, refused, missing), without the rest of the hub. It
 * records every stream event, in order, and can send a runtime `message`, `stop` and `feedback`.
 */
export class FakeAgentHub {
  readonly streams = new Map<string, FakeStream>();
  readonly activities: ActivityUpdate[] = [];
  readonly sockets: ServerSocket[] = [];
  /** Answer to `stream:start`; default ok with ids s1, s2, … */
  startAck: (payload: StreamStart) => SendAck = () => ({ ok: true, id: `s${++this.ids}`, ts: new Date().toISOString() });
  /** Answer to an asked-for delta ack, and how long it takes; default ok at once. */
  deltaAck: (delta: StreamDelta, seq: number) => { ack: StreamDeltaAck; delayMs?: number } | undefined = (_d, seq) => ({
    ack: { ok: true, seq },
  });
  /** Answer to `stream:end`; default ok. */
  endAck: (payload: StreamEnd) => SendAck = (payload) => ({ ok: true, id: payload.id, ts: new Date().toISOString() });
  activityAck: (payload: ActivityUpdate) => OkAck = () => ({ ok: true });
  private ids = 0;
  private readonly waiters: Array<() => void> = [];

  private constructor(
    private readonly io: Server,
    readonly url: string,
  ) {
    io.of(Namespaces.agent).on('connection', (socket) => {
      this.sockets.push(socket);
      socket.on(Events.streamStart, (payload: StreamStart, ack: (res: SendAck) => void) => {
        const res = this.startAck(payload);
        if (res.ok) this.streams.set(res.id, { start: payload, deltas: [], text: '' });
        ack(res);
        this.notify();
      });
      socket.on(Events.streamDelta, (payload: StreamDelta, ack?: (res: StreamDeltaAck) => void) => {
        const stream = this.streams.get(payload.id);
        if (stream) {
          stream.deltas.push({ ...payload, asked: typeof ack === 'function', at: Date.now() });
          stream.text += payload.text;
        }
        if (typeof ack === 'function') {
          const answer = this.deltaAck(payload, stream?.deltas.length ?? 0);
          if (!answer) return this.notify();
          // Without a delay the ack goes at once, so it precedes on the wire whatever is answered next.
          if (answer.delayMs === undefined) ack(answer.ack);
          else setTimeout(() => ack(answer.ack), answer.delayMs);
        }
        this.notify();
      });
      socket.on(Events.streamEnd, (payload: StreamEnd, ack: (res: SendAck) => void) => {
        const stream = this.streams.get(payload.id);
        if (stream) stream.end = payload;
        ack(this.endAck(payload));
        this.notify();
      });
      socket.on(Events.activity, (payload: ActivityUpdate, ack: (res: OkAck) => void) => {
        this.activities.push(payload);
        ack(this.activityAck(payload));
        this.notify();
      });
      this.notify();
    });
  }

  static async start(): Promise<FakeAgentHub> {
    const http = createServer();
    const io = new Server(http, { transports: ['websocket'], maxHttpBufferSize: 1e8 });
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    return new FakeAgentHub(io, `http://127.0.0.1:${(http.address() as AddressInfo).port}`);
  }

  /** A connected runtime of this fake hub. */
  async agent(options: Partial<RelayAgentOptions> = {}): Promise<RelayAgent> {
    const agent = new RelayAgent({ url: this.url, apiKey: TEST_AGENT_KEY, agentId: 'bot', ...options });
    await agent.connect();
    await this.until(() => this.sockets.some((s) => s.connected));
    return agent;
  }

  /** The stream with id `id` (throws when the hub never opened it). */
  stream(id: string): FakeStream {
    const stream = this.streams.get(id);
    if (!stream) throw new Error(`no stream ${id}`);
    return stream;
  }

  /** Delivers a client message to the runtime, as the hub does (the SDK acks it). */
  async message(id: string, text = 'hi', from = 'u1'): Promise<void> {
    const message: AgentInboundMessage = { id, ts: new Date().toISOString(), agentId: 'bot', from, text };
    await this.last.timeout(5000).emitWithAck(Events.message, message);
  }

  get last(): ServerSocket {
    return this.sockets[this.sockets.length - 1];
  }

  /** Resolves once `condition` holds, re-checked after every event the fake hub receives. */
  until(condition: () => boolean): Promise<void> {
    if (condition()) return Promise.resolve();
    return new Promise((resolve) => {
      const check = () => (condition() ? resolve() : this.waiters.push(check));
      this.waiters.push(check);
    });
  }

  async stop(): Promise<void> {
    await this.io.close();
  }

  private notify(): void {
    for (const waiter of this.waiters.splice(0)) waiter();
  }
}
