import { AckCodes, HandshakeCodes, SessionClosedCodes, type HandshakeCode } from '../../../src/protocol';
import { classifyHandshake, classifySessionClosed, errorFromAck, RelayChatError } from '../src/codes';

const getter = { refreshable: true, invalidRetried: false };
const fixed = { refreshable: false, invalidRetried: false };

describe('embed code classification', () => {
  it('retries handshake refusals that carry no code (server down, connection limit, draining)', () => {
    expect(classifyHandshake(undefined, undefined, getter)).toBe('retry');
    expect(classifyHandshake(undefined, undefined, fixed)).toBe('retry');
  });

  it('follows the protocol table for every handshake code without special token handling', () => {
    const special: HandshakeCode[] = ['TOKEN_INVALID', 'TOKEN_EXPIRED'];
    for (const [code, { retryable }] of Object.entries(HandshakeCodes)) {
      if (special.includes(code as HandshakeCode)) continue;
      const expected = retryable ? 'retry' : 'stop';
      expect([code, classifyHandshake(code, retryable, getter)]).toEqual([code, expected]);
      // Without the wire flag the SDK falls back to the same table.
      expect([code, classifyHandshake(code, undefined, fixed)]).toEqual([code, expected]);
    }
    expect(classifyHandshake('RATE_LIMITED', true, fixed)).toBe('retry');
    expect(classifyHandshake('SERVER_SHUTTING_DOWN', true, fixed)).toBe('retry');
    expect(classifyHandshake('SERVER_BUSY', undefined, fixed)).toBe('retry');
    expect(classifyHandshake('USER_DEACTIVATED', false, getter)).toBe('stop');
    expect(classifyHandshake('ORIGIN_NOT_ALLOWED', false, getter)).toBe('stop');
  });

  it('gives TOKEN_INVALID one more try with a getter (secret rotation), then stops', () => {
    expect(classifyHandshake('TOKEN_INVALID', false, getter)).toBe('retry');
    expect(classifyHandshake('TOKEN_INVALID', false, { refreshable: true, invalidRetried: true })).toBe('stop');
    expect(classifyHandshake('TOKEN_INVALID', false, fixed)).toBe('stop');
  });

  it('retries TOKEN_EXPIRED only when a getter can bring a fresh token', () => {
    expect(classifyHandshake('TOKEN_EXPIRED', true, getter)).toBe('retry');
    expect(classifyHandshake('TOKEN_EXPIRED', true, { refreshable: true, invalidRetried: true })).toBe('retry');
    expect(classifyHandshake('TOKEN_EXPIRED', true, fixed)).toBe('stop');
  });

  it('trusts the wire flag for codes it does not know, and stops when there is none', () => {
    expect(classifyHandshake('SOME_FUTURE_CODE', true, fixed)).toBe('retry');
    expect(classifyHandshake('SOME_FUTURE_CODE', false, getter)).toBe('stop');
    expect(classifyHandshake('SOME_FUTURE_CODE', undefined, getter)).toBe('stop');
  });

  it('classifies session:closed codes', () => {
    expect(Object.keys(SessionClosedCodes).sort()).toEqual([
      'API_KEY_REVOKED',
      'RATE_LIMITED',
      'SERVER_UNAVAILABLE',
      'TOKEN_EXPIRED',
      'USER_DEACTIVATED',
    ]);
    expect(classifySessionClosed('TOKEN_EXPIRED', true, getter)).toBe('retry');
    expect(classifySessionClosed('TOKEN_EXPIRED', true, fixed)).toBe('stop');
    expect(classifySessionClosed('RATE_LIMITED', true, fixed)).toBe('retry');
    expect(classifySessionClosed('RATE_LIMITED', undefined, fixed)).toBe('retry');
    // The replica lost its Redis subscription: reconnect to get what it missed replayed.
    expect(classifySessionClosed('SERVER_UNAVAILABLE', true, fixed)).toBe('retry');
    expect(classifySessionClosed('SERVER_UNAVAILABLE', undefined, fixed)).toBe('retry');
    expect(classifySessionClosed('USER_DEACTIVATED', false, getter)).toBe('stop');
    expect(classifySessionClosed('USER_DEACTIVATED', undefined, getter)).toBe('stop');
    // An unannounced server-side disconnect is read as transient.
    expect(classifySessionClosed(undefined, undefined, fixed)).toBe('retry');
  });

  it('turns error acks into RelayChatErrors, marking codes where a resend may succeed', () => {
    const offline = errorFromAck({ code: 'AGENT_OFFLINE', message: 'no runtime' }, 'fallback');
    expect(offline).toBeInstanceOf(RelayChatError);
    expect(offline).toMatchObject({ name: 'RelayChatError', code: 'AGENT_OFFLINE', message: 'no runtime', retryable: true });
    expect(errorFromAck({ code: 'RATE_LIMITED' }, 'refused')).toMatchObject({ message: 'refused', retryable: true });
    expect(errorFromAck({ code: 'PAYLOAD_TOO_LARGE' }, 'refused')).toMatchObject({ retryable: false });
    expect(errorFromAck({ code: 'SUB_MISMATCH' }, 'refused')).toMatchObject({ retryable: false });
    // The hub's store outage passes: a resend may succeed (the SDK used to treat it as final).
    expect(errorFromAck({ code: 'SERVER_UNAVAILABLE' }, 'refused')).toMatchObject({ retryable: true });
    for (const [code, { retryable }] of Object.entries(AckCodes))
      expect([code, errorFromAck({ code }, 'x').retryable]).toEqual([code, retryable]);
    // A malformed ack still rejects, as an invalid exchange rather than a silent hang.
    expect(errorFromAck(undefined, 'refused')).toMatchObject({ code: 'INVALID_PAYLOAD' });
  });
});
