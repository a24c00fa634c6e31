// The tables of docs/ that are generated from the code: the configuration from the convict schema,
// the protocol's events, handshakes and codes from src/protocol (its registry and catalogues), the
// REST problem codes from their catalogue. Reads the build (dist/): run `npm run build` first.
// scripts/docs.mjs writes them into docs/; scripts/config-table.mjs prints the configuration table.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { configSchema } = require('../dist/config/config.schema.js');
const { ProtocolRegistry } = require('../dist/protocol/protocol.registry.js');
const { AckCodes, HandshakeCodes, ProblemCodes, SessionClosedCodes } = require('../dist/protocol/codes.js');
const { HubMetrics } = require('../dist/metrics/metrics.js');

const cell = (text) => String(text).replace(/\|/g, '\\|').replace(/\n/g, ' ');
const table = (head, rows) =>
  [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');
const yesNo = (retryable) => (retryable ? 'yes' : 'no');

/** Every setting: variable, default, meaning. */
export function configTable() {
  const show = (value) => {
    if (value === null) return '—';
    if (Array.isArray(value)) return `\`${value.join(',')}\``;
    return `\`${String(value)}\``;
  };
  const rows = Object.entries(configSchema).map(([key, entry]) => [
    `\`${key}\``,
    entry.sensitive && entry.default === null ? 'secret, no default' : show(entry.default),
    cell(entry.doc),
  ]);
  return table(['variable', 'default', 'meaning'], rows);
}

/** A payload or ack schema as one line: `{ a, b?, ok: true }`, alternatives joined by `|`. */
function shape(schema) {
  if (schema.anyOf) return schema.anyOf.map(shape).join(' \\| ');
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  if (schema.type === 'object' && schema.properties) {
    const required = new Set(schema.required ?? []);
    const fields = Object.entries(schema.properties).map(
      ([name, field]) => `${name}${required.has(name) ? '' : '?'}${field.const !== undefined ? `: ${JSON.stringify(field.const)}` : ''}`,
    );
    return `{ ${fields.join(', ')} }`;
  }
  if (schema.type === 'array') return `[${shape(schema.items)}]`;
  return schema.type ?? 'any';
}

/** Per namespace, every event in both directions: payload, ack, when. */
export function eventsTable() {
  return Object.values(ProtocolRegistry)
    .map((ns) => {
      const rows = [];
      for (const [direction, arrow] of [
        ['receive', `${ns.peer} → hub`],
        ['send', `hub → ${ns.peer}`],
      ]) {
        for (const [event, spec] of Object.entries(ns[direction])) {
          rows.push([`\`${event}\``, arrow, `\`${shape(spec.payload)}\``, spec.ack ? `\`${shape(spec.ack)}\`` : '—', cell(spec.summary)]);
        }
      }
      return [
        `**\`${ns.path}\`** (${ns.peer} = ${cell(ns.title.toLowerCase())}): ${cell(ns.description)}`,
        '',
        table(['event', 'direction', 'payload', 'ack', 'when'], rows),
      ].join('\n');
    })
    .join('\n\n');
}

/** Per namespace, the handshake's `auth` fields. */
export function handshakeTable() {
  const rows = [];
  for (const ns of Object.values(ProtocolRegistry)) {
    const required = new Set(ns.auth.required ?? []);
    for (const [name, field] of Object.entries(ns.auth.properties)) {
      rows.push([`\`${ns.path}\``, `\`${name}\``, required.has(name) ? 'yes' : 'no', cell(field.description ?? '')]);
    }
  }
  return table(['namespace', 'auth field', 'required', 'meaning'], rows);
}

/** Handshake refusal codes, with the namespaces that refuse with each. */
export function handshakeCodesTable() {
  const rows = Object.entries(HandshakeCodes).map(([code, { retryable, description }]) => {
    const where = Object.values(ProtocolRegistry)
      .filter((ns) => ns.refusalCodes.includes(code))
      .map((ns) => `\`${ns.path}\``);
    return [`\`${code}\``, yesNo(retryable), where.join(', '), cell(description)];
  });
  return table(['code', 'retryable', 'namespaces', 'meaning'], rows);
}

/** Error-ack codes. */
export function ackCodesTable() {
  const rows = Object.entries(AckCodes).map(([code, { retryable, description }]) => [`\`${code}\``, yesNo(retryable), cell(description)]);
  return table(['code', 'retryable', 'meaning'], rows);
}

/** `session:closed` codes, with the namespaces that send each. */
export function sessionClosedCodesTable() {
  const rows = Object.entries(SessionClosedCodes).map(([code, { retryable, description }]) => {
    const where = Object.values(ProtocolRegistry)
      .filter((ns) => Object.values(ns.send).some((spec) => spec.codes?.includes(code)))
      .map((ns) => `\`${ns.path}\``);
    return [`\`${code}\``, yesNo(retryable), where.join(', '), cell(description)];
  });
  return table(['code', 'retryable', 'namespaces', 'meaning'], rows);
}

/** REST problem codes with their status. */
export function problemCodesTable() {
  const rows = Object.entries(ProblemCodes).map(([code, { status, description }]) => [`\`${code}\``, String(status), cell(description)]);
  return table(['code', 'status', 'meaning'], rows);
}

/** The hub's own Prometheus metrics (prom-client's process and Node.js defaults left out). */
export function metricsTable() {
  const rows = new HubMetrics().registry
    .getMetricsAsArray()
    .filter((metric) => metric.name.startsWith('relay_'))
    .map((metric) => [
      `\`${metric.name}\``,
      metric.type,
      (metric.labelNames ?? []).map((l) => `\`${l}\``).join(', ') || '—',
      cell(metric.help),
    ]);
  return table(['metric', 'type', 'labels', 'meaning'], rows);
}

/** Which generated block goes into which page, and where it comes from. */
export const GENERATED = {
  'docs/configuration.md': { config: ['src/config/config.schema.ts', configTable] },
  'docs/protocol.md': {
    events: ['src/protocol/protocol.registry.ts', eventsTable],
    handshake: ['src/protocol/protocol.registry.ts', handshakeTable],
    'handshake-codes': ['src/protocol/codes.ts', handshakeCodesTable],
    'ack-codes': ['src/protocol/codes.ts', ackCodesTable],
    'session-closed-codes': ['src/protocol/codes.ts', sessionClosedCodesTable],
  },
  'docs/rest.md': { 'problem-codes': ['src/protocol/codes.ts', problemCodesTable] },
  'docs/operations.md': { metrics: ['src/metrics/metrics.ts', metricsTable] },
};
