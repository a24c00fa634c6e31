import { Type, type TLiteral, type TUnion } from '@sinclair/typebox';
import { AckCodes, HandshakeCodes, SessionClosedCodes } from './codes';

/** A code catalogue of `codes.ts`: code → whether retrying may succeed, and what it means. */
export type CodeCatalogue = Readonly<Record<string, { readonly retryable: boolean; readonly description: string }>>;

/** The schema of one catalogue's codes: a union of string literals, keyed by the catalogue's keys. */
export type CodeSchema<C extends CodeCatalogue> = TUnion<TLiteral<Extract<keyof C, string>>[]>;

/**
 * The catalogue as a schema: one `const` per code carrying its description and, as the extension
 * `x-retryable`, whether a retry may succeed. So the payload field that carries a code documents
 * every value it can take, and the AsyncAPI document lists the catalogue from this one schema.
 */
export function codeSchema<C extends CodeCatalogue>(catalogue: C, title: string, description: string): CodeSchema<C> {
  const codes = Object.keys(catalogue) as Extract<keyof C, string>[];
  return Type.Union(
    codes.map((code) => Type.Literal(code, { description: catalogue[code].description, 'x-retryable': catalogue[code].retryable })),
    { title, description },
  );
}

/** Codes of a refused handshake (`connect_error` `err.data.code`). */
export const HandshakeCodeSchema = codeSchema(
  HandshakeCodes,
  'HandshakeCode',
  'Why a handshake was refused. Carried by connect_error as err.data = { code, retryable }.',
);

/** Codes of error acks. */
export const AckCodeSchema = codeSchema(
  AckCodes,
  'AckCode',
  'Why an event was not accepted. Carried by an error ack { ok: false, error }.',
);

/** Codes of `session:closed`. */
export const SessionClosedCodeSchema = codeSchema(
  SessionClosedCodes,
  'SessionClosedCode',
  'Why the hub ends a session. Carried by session:closed just before the disconnect.',
);

/** Every catalogue a peer can receive, by the name the AsyncAPI document gives it. */
export const CodeCatalogues = {
  HandshakeCode: { catalogue: HandshakeCodes, schema: HandshakeCodeSchema },
  AckCode: { catalogue: AckCodes, schema: AckCodeSchema },
  SessionClosedCode: { catalogue: SessionClosedCodes, schema: SessionClosedCodeSchema },
} as const;
