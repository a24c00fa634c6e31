import type { AckCodes, HandshakeCodes, SessionClosedCodes } from './codes';
import type { Assert, Same } from './type-checks';

/**
 * The retryable codes of each catalogue in `codes.ts`, without the descriptions: all a client
 * needs to decide whether to try again, at a fraction of the catalogues' weight in the browser
 * bundle. The assertions below fail the build when a list and its catalogue disagree.
 */
export const RetryableCodes = {
  handshake: ['TOKEN_EXPIRED', 'RATE_LIMITED', 'SERVER_SHUTTING_DOWN', 'SERVER_UNAVAILABLE', 'SERVER_BUSY', 'AGENT_RUNTIME_LIMIT'],
  sessionClosed: ['TOKEN_EXPIRED', 'RATE_LIMITED', 'SERVER_UNAVAILABLE'],
  ack: ['AGENT_OFFLINE', 'TIMEOUT', 'RATE_LIMITED', 'SERVER_UNAVAILABLE'],
} as const;

/** Whether `code` of the `catalogue` is retryable; false for a code the catalogue does not have. */
export function isRetryable(catalogue: keyof typeof RetryableCodes, code: string): boolean {
  return (RetryableCodes[catalogue] as readonly string[]).includes(code);
}

type RetryableOf<C> = { [K in keyof C]: C[K] extends { readonly retryable: true } ? K : never }[keyof C];
export type RetryableListsMatchCatalogues = [
  Assert<Same<(typeof RetryableCodes.handshake)[number], RetryableOf<typeof HandshakeCodes>>>,
  Assert<Same<(typeof RetryableCodes.sessionClosed)[number], RetryableOf<typeof SessionClosedCodes>>>,
  Assert<Same<(typeof RetryableCodes.ack)[number], RetryableOf<typeof AckCodes>>>,
];
