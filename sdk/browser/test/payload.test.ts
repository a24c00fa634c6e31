import { checkPayload } from '../src/payload';

describe('embed checkPayload', () => {
  it('accepts text with an optional JSON object', () => {
    expect(checkPayload('hi', undefined, 1_000)).toBeUndefined();
    expect(checkPayload('', { nested: { a: [1, 2] } }, 1_000)).toBeUndefined();
  });

  it('refuses non-string text and data that is not a JSON object', () => {
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    for (const [text, data] of [
      [42, undefined],
      ['x', null],
      ['x', [1]],
      ['x', 'str'],
      ['x', circular],
      ['x', { n: 1n }],
    ]) {
      expect(checkPayload(text, data, 1_000)).toMatchObject({ code: 'INVALID_PAYLOAD' });
    }
  });

  it('measures UTF-8 bytes of the whole payload, not characters', () => {
    const overhead = JSON.stringify({ clientMessageId: '00000000-0000-4000-8000-000000000000', text: '' }).length;
    // '€' is 3 bytes in UTF-8: 10 of them fit in overhead + 30 bytes and not in one byte less.
    expect(checkPayload('€'.repeat(10), undefined, overhead + 30)).toBeUndefined();
    expect(checkPayload('€'.repeat(10), undefined, overhead + 29)).toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
    expect(checkPayload('a', { big: 'x'.repeat(100) }, overhead + 50)).toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
  });
});
