import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server, type Socket as ServerSocket } from 'socket.io';
import {
  applyPartChange,
  defaultDeltaIndex,
  Events,
  Namespaces,
  type ActivityUpdate,
  type AgentInboundMessage,
  type OkAck,
  type SendAck,
  type AgentApproval,
  type MessagePart,
  type StreamPart,
  type StreamPartAck,
  type StreamUpdate,
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
  /** The parts, as the hub would hold them: every delta, part and update applied in arrival order. */
  parts: MessagePart[];
  /** `stream:part` and `stream:update` payloads, in arrival order. */
  changes: Array<StreamPart | StreamUpdate>;
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
  /** Answer to `stream:part` and `stream:update`; default ok (a refusal changes nothing). */
  changeAck: (payload: StreamPart | StreamUpdate) => { ok: false; error: { code: 'INVALID_PAYLOAD'; message: string } } | undefined = () =>
    undefined;
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
        if (res.ok) this.streams.set(res.id, { start: payload, deltas: [], text: '', parts: [], changes: [] });
        ack(res);
        this.notify();
      });
      socket.on(Events.streamDelta, (payload: StreamDelta, ack?: (res: StreamDeltaAck) => void) => {
        const stream = this.streams.get(payload.id);
        if (stream) {
          stream.deltas.push({ ...payload, asked: typeof ack === 'function', at: Date.now() });
          stream.text += payload.text;
          applyPartChange(stream.parts, { kind: 'delta', index: payload.index ?? defaultDeltaIndex(stream.parts), text: payload.text });
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
      socket.on(Events.streamPart, (payload: StreamPart, ack: (res: StreamPartAck) => void) => {
        const stream = this.streams.get(payload.id);
        const refused = this.changeAck(payload);
        if (refused || !stream) ack(refused ?? { ok: false, error: { code: 'STREAM_NOT_FOUND', message: 'no such stream' } });
        else {
          stream.changes.push(payload);
          stream.parts.push(payload.part);
          ack({ ok: true, seq: stream.deltas.length + stream.changes.length, index: stream.parts.length - 1 });
        }
        this.notify();
      });
      socket.on(Events.streamUpdate, (payload: StreamUpdate, ack: (res: StreamDeltaAck) => void) => {
        const stream = this.streams.get(payload.id);
        const refused = this.changeAck(payload);
        if (refused || !stream?.parts[payload.index])
          ack(refused ?? { ok: false, error: { code: 'INVALID_PAYLOAD', message: 'no such part' } });
        else {
          stream.changes.push(payload);
          applyPartChange(stream.parts, { kind: 'update', index: payload.index, patch: payload.part });
          ack({ ok: true, seq: stream.deltas.length + stream.changes.length });
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

  /** Delivers a user's decision to the runtime, as the hub does; resolves with the runtime's ack. */
  async approval(approval: Omit<AgentApproval, 'ts' | 'from'> & { from?: string }, timeoutMs = 5000): Promise<unknown> {
    return this.last.timeout(timeoutMs).emitWithAck(Events.approval, { from: 'u1', ts: new Date().toISOString(), ...approval });
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
