import { fill } from '../../src/store/json-frames';
import {
  handoffRequest,
  parseFrame,
  parseResponse,
  requestFrame,
  responseFrame,
  RoomFrames,
  splitRequest,
  withTrailingField,
} from '../../src/cluster/frames';

// The frames the hub splices by hand must be the JSON a plain JSON.stringify would give, whatever
// the values (quotes, unicode, nesting), or the replica reading them drops the message.
describe('json frames', () => {
  it('a trailing field filled in gives the JSON of the whole object', () => {
    const object = { t: 'req', id: 'a"b', message: { text: 'héllo \u2028 "quoted"', nested: [1, { x: null }] }, timeoutMs: 5 };
    const socketId = 'sock"et\\1';
    const framed = fill(withTrailingField(object, 'socketId'), JSON.stringify(socketId));
    expect(framed).toBe(JSON.stringify({ ...object, socketId }));
    expect(JSON.parse(framed)).toEqual({ ...object, socketId });
  });

  it('a trailing field on an empty object', () => {
    expect(fill(withTrailingField({}, 'k'), '1')).toBe('{"k":1}');
  });

  it('parses JSON frames and gives null for anything else', () => {
    expect(parseFrame<{ t: string }>(Buffer.from('{"t":"res"}'))).toEqual({ t: 'res' });
    expect(parseFrame(Buffer.from('\x93\x01'))).toBeNull();
    expect(parseFrame('{')).toBeNull();
  });
});

// A replica serving a delivery request takes the message's JSON as it came, to write it to the
// runtime without parsing and serializing it again; any other frame is a response.
describe('delivery request frames', () => {
  const envelope = {
    t: 'req',
    id: 'r1',
    from: 'replica-a',
    timeoutMs: 5000,
    record: {
      key: { agentId: 'bot', sub: 'u', clientMessageId: 'c,"message":{"x":1}' },
      record: { id: 'm1', ts: 't', delivered: false },
      ttlS: 60,
    },
    socketId: 'sock-1',
  };
  const message = { id: 'm1', ts: 't', agentId: 'bot', from: 'u', text: 'a "quoted" text,"message":{}', data: { message: 1 } };

  it('splits a request whose message comes last into its envelope and the message JSON as sent', () => {
    const frame = JSON.stringify({ ...envelope, message });
    const split = splitRequest(frame);
    expect(split).not.toBeNull();
    expect(split!.envelope).toEqual(envelope);
    expect(split!.json).toBe(JSON.stringify(message));
  });

  it('finds no request in a response, or in a frame whose message is not its last field', () => {
    const { socketId, ...rest } = envelope;
    const notLast = { t: 'req', id: 'r1', from: 'replica-a', message, timeoutMs: 5000, record: rest.record, socketId };
    expect(splitRequest(JSON.stringify(notLast))).toBeNull();
    expect(splitRequest(JSON.stringify({ t: 'res', id: 'r1', result: 'acked' }))).toBeNull();
  });

  it('writes a request as the JSON of its fields in wire order, the message last, and splits it back', () => {
    const { record } = envelope;
    const frame = requestFrame('r1', 'replica-a', 'sock-1', 5000, record, 'approval', message);
    expect(frame).toBe(
      JSON.stringify({ t: 'req', id: 'r1', from: 'replica-a', socketId: 'sock-1', timeoutMs: 5000, record, event: 'approval', message }),
    );
    expect(splitRequest(frame)!.json).toBe(JSON.stringify(message));
    expect(requestFrame('r1', 'replica-a', 'sock-1', 5000, null, undefined, message)).toBe(
      JSON.stringify({ t: 'req', id: 'r1', from: 'replica-a', socketId: 'sock-1', timeoutMs: 5000, message }),
    );
  });

  it("gives the intake's script a request to fill with the socket id, and the observed mark's place", () => {
    const { record } = envelope;
    const request = handoffRequest('r1', 'replica-a', 5000, record, message);
    const filled = fill(request, JSON.stringify('sock-1'));
    expect(filled).toBe(JSON.stringify({ t: 'req', id: 'r1', from: 'replica-a', timeoutMs: 5000, record, socketId: 'sock-1', message }));
    const after = request.after.slice(0, request.at) + request.observed + request.after.slice(request.at);
    expect(JSON.parse(request.before + '"sock-1"' + after)).toMatchObject({ message: { observed: true, ...message } });
  });

  it('reads a response and nothing else as one', () => {
    const frame = responseFrame('r1', 'acked');
    expect(frame).toBe('{"t":"res","id":"r1","result":"acked"}');
    expect(parseResponse(frame)).toEqual({ t: 'res', id: 'r1', result: 'acked' });
    expect(parseResponse(JSON.stringify({ ...envelope, message }))).toBeNull();
    expect(parseResponse('{')).toBeNull();
  });
});

// Without the client namespace's sharded adapter (one replica), no broadcast is published by the store.
describe('room frames', () => {
  it('are all null until given a namespace', () => {
    const frames = new RoomFrames();
    expect([frames.message('r'), frames.delta('r', 's'), frames.part('r', 's'), frames.end('r')]).toEqual([null, null, null, null]);
  });
});
