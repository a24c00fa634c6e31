import { splitRequest } from '../../src/cluster/cluster.dispatcher';

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
});
