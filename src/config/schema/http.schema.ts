/** Which origins and proxies the HTTP server trusts. */
export const httpSchema = {
  CORS_ORIGINS: {
    doc: 'Comma-separated origins allowed for REST CORS and at the /ws/client handshake; `*` allows any. Defaults to `*` outside production and to none in production.',
    format: 'comma-list',
    default: null as string[] | null,
    env: 'CORS_ORIGINS',
  },
  TRUST_PROXY: {
    doc: 'Express trust-proxy setting (false, true, hop count, or addresses); per-IP limits use the client address it yields.',
    format: 'trust-proxy',
    default: false as boolean | number | string,
    env: 'TRUST_PROXY',
  },
};

/** The API documents and pages the hub writes and serves. */
export const docsSchema = {
  OPENAPI_SPEC_FILE: {
    doc: 'Path the OpenAPI spec is written to on every start (a failed write is logged, not fatal).',
    format: String,
    default: 'openapi.json',
    env: 'OPENAPI_SPEC_FILE',
  },
  ASYNCAPI_SPEC_FILE: {
    doc: 'Path the AsyncAPI document of the relay protocol is written to on every start (a failed write is logged, not fatal).',
    format: String,
    default: 'asyncapi.json',
    env: 'ASYNCAPI_SPEC_FILE',
  },
  PUBLIC_URL: {
    doc: 'URL browsers and runtimes reach the hub at (origin plus an optional path prefix), named as the server of the AsyncAPI document. Unset: http://<HOST, or localhost for 0.0.0.0>:<PORT>.',
    format: 'public-url',
    default: null as string | null,
    env: 'PUBLIC_URL',
  },
  API_DOCS_ENABLED: {
    doc: 'Serve interactive docs at /api and the raw spec at /api-json, and the relay protocol at /asyncapi and /asyncapi.json.',
    format: 'strict-boolean',
    default: true,
    env: 'API_DOCS_ENABLED',
  },
  DEMO_ENABLED: {
    doc: 'Serve the demo chat page at / with a built-in echo agent and a development token route. Never active in production.',
    format: 'strict-boolean',
    default: true,
    env: 'DEMO_ENABLED',
  },
};
