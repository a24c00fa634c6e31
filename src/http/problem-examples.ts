import { STATUS_CODES } from 'node:http';
import { ProblemCodes, type ProblemCode } from '../protocol';

type Json = Record<string, unknown>;
interface Operation {
  operationId?: string;
  requestBody?: unknown;
  security?: Record<string, string[]>[];
  responses?: Record<string, { content?: Record<string, Json> }>;
}

/** The problem codes of one status, from the catalogue (`src/protocol/codes.ts`). */
const codesOf = (status: number) => (Object.keys(ProblemCodes) as ProblemCode[]).filter((code) => ProblemCodes[code].status === status);

/** 401s by credential: what a bearer token and what an api-key header can get. */
const BEARER_401: readonly ProblemCode[] = [
  'AUTHORIZATION_MALFORMED',
  'TOKEN_REQUIRED',
  'TOKEN_INVALID',
  'TOKEN_EXPIRED',
  'SUB_REQUIRED',
  'SUB_RESERVED',
];
const API_KEY_401: readonly ProblemCode[] = ['API_KEY_REQUIRED', 'API_KEY_INVALID'];

/**
 * The codes an operation can answer `status` with. The credential decides 401s and 403s (a bearer
 * token's user can be deactivated, an API key lacks a scope or a bot); any other status lists
 * every code of that status, so a code added to the catalogue shows up without an edit here.
 */
function codesFor(op: Operation, path: string, status: number): ProblemCode[] {
  const schemes = new Set(op.security?.flatMap((s) => Object.keys(s)) ?? []);
  const scopes = new Set(op.security?.flatMap((s) => Object.values(s).flat()) ?? []);
  const bearer = schemes.has('defaultBearerAuth');
  const apiKey = schemes.has('api-key');
  if (status === 401) return [...(bearer ? BEARER_401 : []), ...(apiKey ? API_KEY_401 : [])];
  if (status === 403) {
    const codes: ProblemCode[] = [];
    if (bearer && scopes.has('ADMIN')) codes.push('ROLE_REQUIRED');
    if (bearer) codes.push('USER_DEACTIVATED');
    if (apiKey) codes.push('SCOPE_REQUIRED');
    if (apiKey && path.includes('{agentId}')) codes.push('AGENT_NOT_ALLOWED');
    if (apiKey && op.operationId === 'publishAgentMessage') codes.push('RECIPIENT_NOT_ALLOWED');
    return codes;
  }
  if (status === 409 && op.operationId === 'updateUser') return ['EMAIL_TAKEN'];
  if (status === 400 && !op.requestBody) return ['VALIDATION_FAILED'];
  return codesOf(status);
}

/** The body the hub answers with for `code` (`src/http/errors.ts`), as an OpenAPI example. */
function example(code: ProblemCode): Json {
  const { status, description } = ProblemCodes[code];
  const detail = `${description.charAt(0).toUpperCase()}${description.slice(1)}.`;
  const value: Json = { type: 'about:blank', title: STATUS_CODES[status] ?? 'Error', status, detail, code };
  if (code === 'VALIDATION_FAILED') value.errors = [{ path: 'body.email', message: 'invalid string value' }];
  return { summary: code, value };
}

/**
 * The spec with an example of its own code on every problem+json response: without them Swagger UI
 * shows the ProblemDto schema's example (a 400 `VALIDATION_FAILED`) under every 401, 403 and 429.
 * `examples` is keyed by code, so the docs page offers each code the status can carry.
 */
export function withProblemExamples<T extends Json>(spec: T): T {
  const copy = structuredClone(spec);
  for (const [path, item] of Object.entries(copy.paths as Record<string, Record<string, Operation>>)) {
    for (const op of Object.values(item)) {
      for (const [status, response] of Object.entries(op.responses ?? {})) {
        const media = response.content?.['application/problem+json'];
        if (!media) continue;
        const codes = codesFor(op, path, Number(status));
        if (codes.length > 0) media.examples = Object.fromEntries(codes.map((code) => [code, example(code)]));
      }
    }
  }
  return copy;
}
