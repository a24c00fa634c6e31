// Writes the Python agent SDK's view of the relay protocol (sdk/python/relay_hub_agent/_protocol.py)
// from the AsyncAPI document the build just wrote (dist/asyncapi.json): the agent namespace, its
// events by direction and by name, the code catalogues with their retryability, and every payload
// and ack schema of the namespace as Python types (message parts included). The module is committed, so
// a protocol change shows up as a diff after `npm run build`. Run by scripts/build.mjs after the
// AsyncAPI document; skipped when the Python SDK is not in the tree (the container build context).
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const target = join(root, 'sdk', 'python', 'relay_hub_agent', '_protocol.py');

/** The module's text for an AsyncAPI document (exported for tests; deterministic: sorted). */
export function pythonProtocol(doc) {
  const channel = (name) => {
    const c = doc.channels[name];
    if (!c) throw new Error(`the AsyncAPI document has no channel "${name}"`);
    return c;
  };
  const events = { 'A→H': new Set(), 'H→A': new Set() };
  for (const op of Object.values(doc.operations)) {
    if (op.channel.$ref !== '#/channels/agent') continue;
    const direction = op.action === 'receive' ? 'A→H' : 'H→A';
    for (const ref of op.messages) {
      const name = resolve(doc, ref.$ref).name;
      // The handshake is the `connect` operation, not an event a runtime emits or handles.
      if (name && name !== 'connect') events[direction].add(name);
    }
  }
  const catalogue = (schema) =>
    Object.fromEntries(doc.components.schemas[schema].anyOf.map((entry) => [entry.const, entry['x-retryable'] === true]));
  const agentHandshake = Object.values(channel('agent').messages).find((m) => m.name === 'connect_error');
  const lines = [
    '"""The relay protocol as the agent SDK uses it.',
    '',
    "Generated from the hub's AsyncAPI document (dist/asyncapi.json) by scripts/python-protocol.mjs",
    'during `npm run build`. Do not edit: change src/protocol/ in the repository and build again.',
    '"""',
    '',
    'from __future__ import annotations',
    '',
    'from typing import Any, Final, Literal, Mapping, TypedDict, Union',
    '',
    `AGENT_NAMESPACE: Final = ${py(channel('agent').address)}`,
    '',
    '#: Events a runtime emits to the hub (A→H).',
    `AGENT_TO_HUB_EVENTS: Final[frozenset[str]] = ${pySet(events['A→H'])}`,
    '',
    '#: Events the hub emits to a runtime (H→A).',
    `HUB_TO_AGENT_EVENTS: Final[frozenset[str]] = ${pySet(events['H→A'])}`,
    '',
    '#: Handshake refusal codes of the agent namespace.',
    `AGENT_HANDSHAKE_CODES: Final[frozenset[str]] = ${pySet(new Set(agentHandshake?.['x-codes'] ?? []))}`,
    '',
    '#: Handshake refusal codes (connect_error data), code → retryable.',
    `HANDSHAKE_CODES: Final[Mapping[str, bool]] = ${pyDict(catalogue('HandshakeCode'))}`,
    '',
    '#: Error-ack codes, code → retryable.',
    `ACK_CODES: Final[Mapping[str, bool]] = ${pyDict(catalogue('AckCode'))}`,
    '',
    '#: session:closed codes, code → retryable.',
    `SESSION_CLOSED_CODES: Final[Mapping[str, bool]] = ${pyDict(catalogue('SessionClosedCode'))}`,
    '',
    '#: Event names of the agent namespace, both directions.',
    ...[...new Set([...events['A→H'], ...events['H→A']])].sort().map((name) => `${constant(name)}: Final = ${py(name)}`),
    ...typedDicts(doc),
  ];
  return lines.join('\n');
}

/** `stream:start` → `STREAM_START`. */
const constant = (name) => name.toUpperCase().replace(/[^A-Z0-9]+/g, '_');

/**
 * The payload and ack schemas of the agent namespace, and every schema they refer to, as Python
 * types: objects as TypedDicts (optional keys in a `total=False` base), unions of constants as
 * Literal, other unions as Union. Names are the schemas' titles; forward references are strings.
 */
function typedDicts(doc) {
  const schemas = doc.components.schemas;
  const names = new Set();
  const visit = (node) => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (!node || typeof node !== 'object') return;
    const ref = node.$ref;
    // Examples are data, not schemas: a $ref-looking value inside one is not a reference.
    if (typeof ref !== 'string') return Object.entries(node).forEach(([key, value]) => key !== 'examples' && visit(value));
    if (ref.startsWith('#/components/schemas/')) {
      const name = ref.slice('#/components/schemas/'.length);
      if (!names.has(name)) {
        names.add(name);
        visit(schemas[name]);
      }
    } else if (ref.startsWith('#/channels/agent/')) visit(resolve(doc, ref));
  };
  visit(doc.channels.agent.messages);
  const out = ['', '', '# Payload types of the agent namespace, from its JSON schemas.', ''];
  const inline = [];
  const type = (schema, context) => {
    if (schema.$ref) return py(schema.$ref.split('/').pop());
    if ('const' in schema) return `Literal[${pyValue(schema.const)}]`;
    const alternatives = schema.anyOf ?? schema.oneOf;
    if (alternatives) {
      const all = alternatives.every((a) => 'const' in a);
      return wrap(
        all ? 'Literal' : 'Union',
        all ? alternatives.map((a) => pyValue(a.const)) : alternatives.map((a, i) => type(a, `${context}${i + 1}`)),
      );
    }
    if (Array.isArray(schema.type)) return `Union[${schema.type.map((t) => type({ ...schema, type: t }, context)).join(', ')}]`;
    switch (schema.type) {
      case 'string':
        return 'str';
      case 'integer':
        return 'int';
      case 'number':
        return 'float';
      case 'boolean':
        return 'bool';
      case 'null':
        return 'None';
      case 'array':
        return `list[${schema.items ? type(schema.items, `${context}Item`) : 'Any'}]`;
      case 'object': {
        if (Object.keys(schema.properties ?? {}).length === 0) return 'Mapping[str, Any]';
        inline.push(...typedDict(`_${context}`, schema, type));
        return py(`_${context}`);
      }
      default:
        return 'Any';
    }
  };
  for (const name of [...names].sort()) {
    const schema = schemas[name];
    if (schema.type === 'object' && Object.keys(schema.properties ?? {}).length > 0) out.push(...typedDict(name, schema, type));
    else out.push('', `${name} = ${type(schema, name)}`, ...docComment(schema));
  }
  return [...out, ...inline, ''];
}

/** A TypedDict in functional form (wire keys such as `from` are Python keywords); optional keys in a `total=False` base. */
function typedDict(name, schema, type) {
  const required = new Set(schema.required ?? []);
  const fields = (keep) =>
    Object.entries(schema.properties)
      .filter(([key]) => required.has(key) === keep)
      .map(([key, value]) => `        ${py(key)}: ${type(value, `${name.replace(/^_/, '')}${key[0].toUpperCase()}${key.slice(1)}`)},`);
  const [must, may] = [fields(true), fields(false)];
  const dict = (n, body, total) => [
    `${n} = TypedDict(`,
    `    ${py(n)},`,
    '    {',
    ...body,
    `    },${total ? '' : ' total=False,'}`.replace(',}', '}'),
    ')',
  ];
  if (may.length === 0 || must.length === 0) return ['', ...dict(name, may.length ? may : must, may.length === 0), ...docComment(schema)];
  return [
    '',
    ...dict(`_${name}Required`, must, true),
    ...dict(`_${name}Optional`, may, false),
    '',
    '',
    `class ${name}(_${name}Required, _${name}Optional):`,
    `    ${JSON.stringify(schema.description ?? `The ${name} payload.`)}`,
    '',
  ];
}

/** `Literal[a, b]`, one member a line when that is long. */
const wrap = (kind, members) => {
  const line = `${kind}[${members.join(', ')}]`;
  return line.length <= 80 ? line : `${kind}[\n${members.map((m) => `    ${m},\n`).join('')}]`;
};

/** A schema's description as a comment line after it. */
const docComment = (schema) => (schema.description ? [`# ${schema.description.replace(/\s+/g, ' ')}`] : []);
const pyValue = (v) => (v === true ? 'True' : v === false ? 'False' : JSON.stringify(v));

function resolve(doc, ref) {
  return ref
    .replace(/^#\//, '')
    .split('/')
    .reduce((node, key) => node[key.replace(/~1/g, '/').replace(/~0/g, '~')], doc);
}

const py = (s) => JSON.stringify(s);
const pySet = (set) =>
  set.size === 0
    ? 'frozenset()'
    : `frozenset(\n    {\n${[...set]
        .sort()
        .map((s) => `        ${py(s)},\n`)
        .join('')}    }\n)`;
const pyDict = (obj) =>
  `{\n${Object.keys(obj)
    .sort()
    .map((k) => `    ${py(k)}: ${obj[k] ? 'True' : 'False'},\n`)
    .join('')}}`;

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (!existsSync(dirname(target))) {
    console.log('sdk/python is not here; the Python protocol module is not written');
  } else {
    const doc = JSON.parse(readFileSync(join(root, 'dist', 'asyncapi.json'), 'utf8'));
    writeFileSync(target, pythonProtocol(doc));
    console.log(`Python protocol module written to ${target}`);
  }
}
