import { fill, jsonAroundString, RAW_STRING_MIN } from '../../src/store/json-frames';

// The frames the hub splices by hand must be the JSON a plain JSON.stringify would give, whatever
// the values (quotes, unicode, nesting), or the replica reading them drops the message.
describe('json-frames', () => {
  it('fills a name template as text', () => {
    expect(fill({ before: 'relay:dispatch#', after: '#' }, 'replica-1')).toBe('relay:dispatch#replica-1#');
  });

  describe('jsonAroundString', () => {
    const long = (text: string) => text.repeat(Math.ceil(RAW_STRING_MIN / text.length));

    it('puts a long text between two parts that make exactly the JSON.stringify of the message', () => {
      for (const text of [long('plain words '), long('grüße 日本語 \u2028 / <>'), long('a')]) {
        for (const message of [
          { id: 'm1', ts: 't', agentId: 'bot', author: 'agent', text },
          { text, id: 'm1', data: { text: 'x', nested: ['"text":""'] } },
          { id: 'm1', data: { k: 'v' }, text, replyTo: 'm0' },
        ]) {
          const around = jsonAroundString(message, 'text');
          expect(around).not.toBeNull();
          expect(fill(around!, text)).toBe(JSON.stringify(message));
        }
      }
    });

    it('gives null, so the caller stringifies, for a text JSON escapes, a short text, or a place found twice', () => {
      const base = long('x');
      for (const text of [`${base}"`, `${base}\\`, `${base}\n`, `${base}\u0000`, `${base}\ud83d`, `${base}👋`]) {
        expect(jsonAroundString({ id: 'm', text }, 'text')).toBeNull();
      }
      expect(jsonAroundString({ id: 'm', text: 'x'.repeat(RAW_STRING_MIN - 1) }, 'text')).toBeNull();
      // data before text holding the same empty field: the first one found would be the wrong one.
      expect(jsonAroundString({ data: { text: '' }, text: base }, 'text')).toBeNull();
      expect(jsonAroundString({ id: 'm' }, 'text')).toBeNull();
    });
  });
});
