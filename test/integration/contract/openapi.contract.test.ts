import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Ajv from 'ajv';
import { openApiSpec } from '../../../src/http/docs';
import { ProblemCodes, type ProblemCode } from '../../../src/protocol';

/**
 * Contract over the OpenAPI spec tsoa generates at build time (`npm run build` →
 * src/http/generated/openapi.json): the operation table of docs/rest.md, tags, summaries, responses,
 * security, examples on every DTO property, envelope shapes, and a clean Spectral lint.
 */
const ROOT = join(__dirname, '..', '..', '..');
const SPEC_FILE = join(ROOT, 'src/http/generated/openapi.json');

type Schema = Record<string, any>;
interface Operation {
  operationId?: string;
  tags?: string[];
  summary?: string;
  description?: string;
  security?: Record<string, string[]>[];
  requestBody?: Schema;
  responses: Record<string, Schema>;
}

/** docs/rest.md: operationId → method and path. */
const OPERATIONS: Record<string, string> = {
  me: 'GET /auth/me',
  mintEmbedToken: 'POST /auth/embed/token',
  getUsers: 'GET /users',
  getUserById: 'GET /users/{id}',
  createUser: 'POST /users',
  updateUser: 'PUT /users/{id}',
  deleteUser: 'DELETE /users/{id}',
  activateUser: 'POST /users/{id}/activate',
  deactivateUser: 'POST /users/{id}/deactivate',
  getApiKeys: 'GET /api-keys',
  getApiKeyById: 'GET /api-keys/{id}',
  createApiKey: 'POST /api-keys',
  deleteApiKey: 'DELETE /api-keys/{id}',
  getAgents: 'GET /agents',
  getAgentById: 'GET /agents/{agentId}',
  publishAgentMessage: 'POST /agents/{agentId}/messages',
  getConversationMessages: 'GET /agents/{agentId}/conversations/{clientId}/messages',
  deleteConversation: 'DELETE /agents/{agentId}/conversations/{clientId}',
  getConversations: 'GET /agents/{agentId}/conversations',
  takeOverConversation: 'POST /agents/{agentId}/conversations/{clientId}/takeover',
  createOperatorMessage: 'POST /agents/{agentId}/conversations/{clientId}/operator-messages',
  releaseConversation: 'POST /agents/{agentId}/conversations/{clientId}/release',
  getLiveness: 'GET /health/live',
  getReadiness: 'GET /health/ready',
};

/** docs/rest.md: one tag and one security requirement per controller. */
const SECURITY_BY_TAG: Record<string, Record<string, string[]>[]> = {
  Auth: [{ defaultBearerAuth: [] }],
  EmbedTokens: [{ 'api-key': ['embed:mint'] }],
  Users: [{ defaultBearerAuth: ['ADMIN'] }],
  ApiKeys: [{ defaultBearerAuth: ['ADMIN'] }],
  Agents: [{ defaultBearerAuth: ['ADMIN'] }],
  AgentMessages: [{ 'api-key': ['messages:publish'] }],
  Handoff: [{ defaultBearerAuth: ['OPERATOR'] }],
  Health: [],
};

/** docs/rest.md ("Authentication"): operations with security alternatives of their own (ADMIN bearer, or an api key with a scope). */
const SECURITY_BY_OPERATION: Record<string, Record<string, string[]>[]> = {
  getConversationMessages: [{ defaultBearerAuth: ['ADMIN'] }, { 'api-key': ['history:read'] }],
  deleteConversation: [{ defaultBearerAuth: ['ADMIN'] }, { 'api-key': ['history:write'] }],
};

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head'];

if (!existsSync(SPEC_FILE)) throw new Error(`${SPEC_FILE} is missing: run \`npm run build\` (tsoa spec-and-routes) first`);
const spec = JSON.parse(readFileSync(SPEC_FILE, 'utf8')) as Schema;
const schemas = spec.components.schemas as Record<string, Schema>;

function operations(): { method: string; path: string; op: Operation }[] {
  const all: { method: string; path: string; op: Operation }[] = [];
  for (const [path, item] of Object.entries(spec.paths as Record<string, Record<string, Operation>>)) {
    for (const method of METHODS) if (item[method]) all.push({ method: method.toUpperCase(), path, op: item[method] });
  }
  return all;
}

const isRef = (s: Schema) => typeof s.$ref === 'string';
const refName = (s: Schema) => (s.$ref as string).replace('#/components/schemas/', '');

describe('OpenAPI contract (generated spec)', () => {
  it('declares info.version 1.0 and the two security schemes', () => {
    expect(spec.openapi).toMatch(/^3\./);
    expect(spec.info.version).toBe('1.0');
    expect(spec.components.securitySchemes).toEqual({
      defaultBearerAuth: expect.objectContaining({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' }),
      'api-key': expect.objectContaining({ type: 'apiKey', in: 'header', name: 'api-key' }),
    });
  });

  it('has exactly the operations of the REST API (docs/rest.md), each with its lowerCamelCase operationId', () => {
    const actual = Object.fromEntries(
      operations().map(({ method, path, op }) => [op.operationId ?? `(none) ${method} ${path}`, `${method} ${path}`]),
    );
    expect(actual).toEqual(OPERATIONS);
    for (const id of Object.keys(actual)) expect(id).toMatch(/^[a-z][a-zA-Z0-9]*$/);
    const ids = operations().map(({ op }) => op.operationId);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('gives every operation one tag, a summary, a description and its security scheme', () => {
    for (const { method, path, op } of operations()) {
      const where = `${method} ${path}`;
      expect({ where, tags: op.tags?.length }).toEqual({ where, tags: 1 });
      expect({ where, summary: typeof op.summary === 'string' && op.summary.length > 0 }).toEqual({ where, summary: true });
      expect({ where, description: typeof op.description === 'string' && op.description.length > 0 }).toEqual({ where, description: true });
      const security = SECURITY_BY_OPERATION[op.operationId!] ?? SECURITY_BY_TAG[op.tags![0]];
      expect({ where, security: op.security }).toEqual({ where, security });
    }
    expect(spec.paths['/metrics']).toBeUndefined();
  });

  it('documents every status: 2xx in an envelope, errors as problem+json, 201 on creates', () => {
    for (const { method, path, op } of operations()) {
      const where = `${method} ${path}`;
      const statuses = Object.keys(op.responses);
      const success = statuses.filter((s) => s.startsWith('2'));
      expect({ where, success: success.length }).toEqual({ where, success: 1 });
      const id = op.operationId!;
      if (id.startsWith('create') || id === 'mintEmbedToken') expect({ where, success }).toEqual({ where, success: ['201'] });
      if (id === 'publishAgentMessage') expect({ where, success }).toEqual({ where, success: ['202'] });
      if (id === 'deleteConversation')
        expect({ where, success, body: op.responses['204'].content }).toEqual({ where, success: ['204'], body: undefined });
      for (const status of statuses.filter((s) => /^4/.test(s))) {
        expect({ where, status, content: op.responses[status].content }).toEqual({
          where,
          status,
          content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/ProblemDto' } } },
        });
      }
      if (op.security && op.security.length > 0) {
        expect({ where, has401: statuses.includes('401'), has429: statuses.includes('429') }).toEqual({
          where,
          has401: true,
          has429: true,
        });
      }
      const scopes = op.security?.flatMap((s) => Object.values(s).flat()) ?? [];
      if (scopes.length > 0) expect({ where, has403: statuses.includes('403') }).toEqual({ where, has403: true });
      if (op.requestBody) {
        expect({ where, body: Object.keys(op.requestBody.content) }).toEqual({ where, body: ['application/json'] });
        for (const status of ['400', '413', '415'])
          expect({ where, status, documented: statuses.includes(status) }).toEqual({ where, status, documented: true });
      }
      if (/\{(id|agentId)\}/.test(path) && path.startsWith('/users/{id}') && !/activate$/.test(path)) {
        expect({ where, has404: statuses.includes('404') }).toEqual({ where, has404: true });
      }
      const body = op.responses[success[0]].content?.['application/json']?.schema as Schema | undefined;
      if (op.tags![0] !== 'Health' && id !== 'deleteConversation')
        expect({ where, envelope: body && refName(body) }).toEqual({
          where,
          envelope: expect.stringMatching(/^(SingleModel|PaginationModel)_\w+_$/),
        });
      if (['getUsers', 'getApiKeys', 'getAgents', 'getConversationMessages'].includes(id)) {
        expect({ where, envelope: refName(body!) }).toEqual({ where, envelope: expect.stringMatching(/^PaginationModel_/) });
      }
    }
  });

  it('pages every list with page (1–10000000) and perPage (1–100)', () => {
    for (const id of ['getUsers', 'getApiKeys', 'getAgents', 'getConversationMessages']) {
      const [method, path] = OPERATIONS[id].split(' ');
      const params = (spec.paths[path][method.toLowerCase()].parameters as Schema[]).filter((p) => p.in === 'query');
      expect(params.find((p) => p.name === 'page')?.schema).toMatchObject({ type: 'integer', minimum: 1, maximum: 10_000_000 });
      expect(params.find((p) => p.name === 'perPage')?.schema).toMatchObject({ type: 'integer', minimum: 1, maximum: 100 });
    }
    const userFilters = (spec.paths['/users'].get.parameters as Schema[]).map((p) => p.name);
    expect(userFilters).toEqual(expect.arrayContaining(['email', 'q']));
  });

  it('shapes the envelopes as agreed: SingleModel { data, success }, PaginationModel { data[], meta }', () => {
    expect(schemas.MetaListDto).toMatchObject({
      type: 'object',
      required: expect.arrayContaining(['total', 'lastPage', 'currentPage', 'perPage']),
      properties: {
        total: { type: 'integer' },
        lastPage: { type: 'integer' },
        currentPage: { type: 'integer' },
        perPage: { type: 'integer' },
      },
    });
    const singles = Object.keys(schemas).filter((n) => n.startsWith('SingleModel_'));
    const pages = Object.keys(schemas).filter((n) => n.startsWith('PaginationModel_'));
    expect(singles.length).toBeGreaterThanOrEqual(8);
    expect(pages.sort()).toEqual([
      'PaginationModel_AgentDto_',
      'PaginationModel_ApiKeyDto_',
      'PaginationModel_ConversationMessageDto_',
      'PaginationModel_ConversationSummaryDto_',
      'PaginationModel_UserDto_',
    ]);
    for (const name of singles) {
      const s = schemas[name];
      expect({ name, keys: Object.keys(s.properties).sort(), required: [...s.required].sort() }).toEqual({
        name,
        keys: ['data', 'success'],
        required: ['data', 'success'],
      });
      expect({ name, data: isRef(s.properties.data), success: s.properties.success.type }).toEqual({
        name,
        data: true,
        success: 'boolean',
      });
    }
    for (const name of pages) {
      const s = schemas[name];
      expect({ name, keys: Object.keys(s.properties).sort(), required: [...s.required].sort() }).toEqual({
        name,
        keys: ['data', 'meta'],
        required: ['data', 'meta'],
      });
      expect(s.properties.data).toMatchObject({ type: 'array', items: { $ref: expect.any(String) } });
      expect(s.properties.meta).toEqual({ $ref: '#/components/schemas/MetaListDto' });
    }
  });

  it('gives every DTO property an example that validates against the property schema', () => {
    const ajv = new Ajv({ strict: false, allErrors: true });
    ajv.addFormat('date-time', /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/);
    ajv.addFormat('int32', true);
    ajv.addFormat('double', true);
    ajv.addSchema({ components: spec.components }, 'spec');
    const local = (s: Schema): Schema => JSON.parse(JSON.stringify(s).replaceAll('"#/components/', '"spec#/components/'));
    const problems: string[] = [];
    const check = (where: string, schema: Schema) => {
      if (schema.example === undefined) return problems.push(`${where}: no example`);
      const validate = ajv.compile(local(schema));
      if (!validate(schema.example))
        problems.push(`${where}: example ${JSON.stringify(schema.example)} ${ajv.errorsText(validate.errors)}`);
    };
    for (const [name, schema] of Object.entries(schemas)) {
      if (schema.type !== 'object' || !schema.properties) {
        check(name, schema); // aliases: UserId, Email, AgentId, …
        continue;
      }
      expect({ name, additionalProperties: schema.additionalProperties }).toEqual({ name, additionalProperties: false });
      for (const [prop, propSchema] of Object.entries(schema.properties as Record<string, Schema>)) {
        const refOnly = isRef(propSchema) || (propSchema.type === 'array' && isRef(propSchema.items) && ['data', 'errors'].includes(prop));
        if (!refOnly) check(`${name}.${prop}`, propSchema);
      }
    }
    expect(problems).toEqual([]);
  });

  it('passes `spectral lint` (spectral:oas, .spectral.yaml) with zero errors, as served', () => {
    const dir = mkdtempSync(join(tmpdir(), 'spectral-'));
    const file = join(dir, 'openapi.json');
    writeFileSync(file, JSON.stringify(openApiSpec, null, 2)); // as served: its examples are checked against their schemas too
    const result = spawnSync(
      join(ROOT, 'node_modules/.bin/spectral'),
      ['lint', '-r', join(ROOT, '.spectral.yaml'), '-f', 'json', '--quiet', file],
      {
        encoding: 'utf8',
      },
    );
    const findings = JSON.parse(result.stdout || '[]') as { code: string; message: string; path: string[]; severity: number }[];
    const errors = findings.filter((f) => f.severity === 0).map((f) => `${f.code} ${f.path.join('.')}: ${f.message}`);
    expect(errors).toEqual([]);
    expect(result.status).toBe(0);
  }, 60_000);

  describe('as served (/api, /api-json, OPENAPI_SPEC_FILE)', () => {
    const served = openApiSpec as Schema;

    it('says in the security schemes which secret signs which token, and where an API key secret is', () => {
      const { defaultBearerAuth, 'api-key': apiKey } = served.components.securitySchemes as Record<string, { description: string }>;
      // Chat tokens: JWT_SECRET; admin tokens: ADMIN_JWT_SECRET, the only ones the ADMIN routes take.
      expect(defaultBearerAuth.description).toMatch(/signed with JWT_SECRET/);
      expect(defaultBearerAuth.description).toMatch(
        /Admin tokens are signed with ADMIN_JWT_SECRET[^.]*: the ADMIN routes[^.]*accept only those/,
      );
      expect(defaultBearerAuth.description).not.toMatch(/^A client JWT signed with JWT_SECRET/);
      expect(apiKey.description).toMatch(/the secret is the `key` field/);
    });

    it('gives every error response examples of its own status, each with a code of that status from the catalogue', () => {
      const problems: string[] = [];
      let examples = 0;
      for (const [path, item] of Object.entries(served.paths as Record<string, Record<string, Operation>>)) {
        for (const method of METHODS.filter((m) => item[m])) {
          const op = item[method];
          for (const [status, response] of Object.entries(op.responses)) {
            const media = response.content?.['application/problem+json'] as Schema | undefined;
            if (!media) continue;
            const where = `${method.toUpperCase()} ${path} ${status}`;
            const named = Object.entries((media.examples ?? {}) as Record<string, { value: Schema }>);
            if (named.length === 0) problems.push(`${where}: no example`);
            for (const [name, { value }] of named) {
              examples++;
              const code = value.code as ProblemCode;
              if (value.status !== Number(status)) problems.push(`${where}: example ${name} has status ${value.status}`);
              if (ProblemCodes[code]?.status !== Number(status))
                problems.push(`${where}: example ${name} has code ${code} of another status`);
              if (name !== code) problems.push(`${where}: example ${name} shows ${code}`);
            }
          }
        }
      }
      expect(problems).toEqual([]);
      expect(examples).toBeGreaterThan(100);
    });

    it('offers the codes a credential can get: bearer 401s on ADMIN routes, api-key ones on api-key routes, RATE_LIMITED on 429', () => {
      const codes = (path: string, method: string, status: string) =>
        Object.keys(served.paths[path][method].responses[status].content['application/problem+json'].examples ?? {});
      expect(codes('/users', 'get', '401')).toEqual(expect.arrayContaining(['TOKEN_REQUIRED', 'TOKEN_EXPIRED', 'TOKEN_INVALID']));
      expect(codes('/users', 'get', '401')).not.toContain('API_KEY_INVALID');
      expect(codes('/users', 'get', '403')).toContain('ROLE_REQUIRED');
      expect(codes('/auth/embed/token', 'post', '401')).toEqual(['API_KEY_REQUIRED', 'API_KEY_INVALID']);
      expect(codes('/auth/embed/token', 'post', '403')).toEqual(['SCOPE_REQUIRED']);
      expect(codes('/agents/{agentId}/messages', 'post', '403')).toEqual(['SCOPE_REQUIRED', 'AGENT_NOT_ALLOWED', 'RECIPIENT_NOT_ALLOWED']);
      expect(codes('/users', 'get', '429')).toEqual(['RATE_LIMITED']);
      expect(codes('/users', 'post', '400')).toEqual(['VALIDATION_FAILED', 'BAD_REQUEST']);
    });
  });
});
