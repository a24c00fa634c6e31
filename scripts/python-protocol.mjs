// Writes the Python agent SDK's view of the relay protocol (sdk/python/relay_hub_agent/_protocol.py)
// from the AsyncAPI document the build just wrote (dist/asyncapi.json): the agent namespace, its
// events by direction and the code catalogues with their retryability. The module is committed, so
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
    'from typing import Final, Mapping',
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
  ];
  return lines.join('\n');
}

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
