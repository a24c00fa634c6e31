import { fill, parseFrame, withTrailingField } from '../../src/store/json-frames';

// The frames the hub splices by hand must be the JSON a plain JSON.stringify would give, whatever
// the values (quotes, unicode, nesting), or the replica reading them drops the message.
describe('json-frames', () => {
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

  it('fills a name template as text', () => {
    expect(fill({ before: 'relay:dispatch#', after: '#' }, 'replica-1')).toBe('relay:dispatch#replica-1#');
  });

  it('parses JSON frames and gives null for anything else', () => {
    expect(parseFrame<{ t: string }>(Buffer.from('{"t":"res"}'))).toEqual({ t: 'res' });
    expect(parseFrame(Buffer.from('\x93\x01'))).toBeNull();
    expect(parseFrame('{')).toBeNull();
  });
});
