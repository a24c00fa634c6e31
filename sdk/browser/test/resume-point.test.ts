import { subOf } from '../src/resume-point';
import { mintToken } from '../../../test/helpers/tokens';

describe('subOf (the sub that keys the persisted resume point)', () => {
  const jwt = (claims: object) => `e30.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.sig`;

  it('reads the sub of a real hub token without verifying it', () => {
    expect(subOf(mintToken({ sub: 'user-42' }))).toBe('user-42');
  });

  it('decodes base64url payloads, including the characters plain base64 spells differently', () => {
    // '?>' in the JSON encodes to '_' and '-' in base64url.
    const sub = 'a?>?>b';
    const token = jwt({ sub });
    expect(token.split('.')[1]).toMatch(/[-_]/);
    expect(subOf(token)).toBe(sub);
  });

  it('gives distinct non-ASCII subs distinct values', () => {
    expect(subOf(jwt({ sub: 'zoë' }))).not.toBe(subOf(jwt({ sub: 'zoé' })));
  });

  it.each([
    ['no dots', 'opaque'],
    ['a payload that is not base64', 'a.!!!.c'],
    ['a payload that is not JSON', `a.${Buffer.from('nope').toString('base64url')}.c`],
    ['no sub', jwt({ iss: 'x' })],
    ['an empty sub', jwt({ sub: '' })],
    ['a numeric sub', jwt({ sub: 7 })],
    ['a JSON null payload', `a.${Buffer.from('null').toString('base64url')}.c`],
  ])('is undefined for %s', (_, token) => {
    expect(subOf(token)).toBeUndefined();
  });
});
