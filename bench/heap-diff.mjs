// What a server's heap gained between two heap snapshots of the same process, per client: the
// objects the second holds that the first did not (V8 keeps an object's snapshot id for the life of
// the process), grouped by constructor, and by what holds them (retainer, edge, object).
//
// `node --max-old-space-size=4096 bench/heap-diff.mjs <before.heapsnapshot> <after.heapsnapshot> <clients> [rows]`
// prints both tables; bench/heap-per-client.mjs takes the snapshots.
import { readFileSync } from 'node:fs';

/** A snapshot as flat arrays, with the edges of each node indexable. */
export function loadSnapshot(file) {
  const raw = JSON.parse(readFileSync(file, 'utf8'));
  const meta = raw.snapshot.meta;
  const nodeFields = meta.node_fields;
  const edgeFields = meta.edge_fields;
  const nodeTypes = meta.node_types[0];
  const edgeTypes = meta.edge_types[0];
  const N = nodeFields.length;
  const E = edgeFields.length;
  const f = (name) => nodeFields.indexOf(name);
  const ef = (name) => edgeFields.indexOf(name);
  const [TYPE, NAME, ID, SIZE, EDGES] = [f('type'), f('name'), f('id'), f('self_size'), f('edge_count')];
  const [ETYPE, ENAME, ETO] = [ef('type'), ef('name_or_index'), ef('to_node')];
  const { nodes, edges, strings } = raw;
  const count = nodes.length / N;
  const firstEdge = new Uint32Array(count + 1);
  for (let i = 0, e = 0; i < count; i++) {
    firstEdge[i] = e;
    e += nodes[i * N + EDGES] * E;
    firstEdge[i + 1] = e;
  }
  const node = (i) => ({
    type: nodeTypes[nodes[i * N + TYPE]],
    name: strings[nodes[i * N + NAME]],
    id: nodes[i * N + ID],
    size: nodes[i * N + SIZE],
  });
  function* edgesOf(i) {
    for (let e = firstEdge[i]; e < firstEdge[i + 1]; e += E) {
      const type = edgeTypes[edges[e + ETYPE]];
      const nameOrIndex = edges[e + ENAME];
      yield {
        type,
        name: type === 'element' || type === 'hidden' ? `[${nameOrIndex}]` : strings[nameOrIndex],
        to: edges[e + ETO] / N,
      };
    }
  }
  return { count, node, edgesOf };
}

/** The group of a node: its constructor, or its kind for the nodes that have none. */
export function kindOf({ type, name }) {
  switch (type) {
    case 'object':
    case 'native':
      return name;
    case 'closure':
      return `(closure) ${name || 'anonymous'}`;
    case 'array':
      return `(array) ${name}`;
    case 'hidden':
    case 'object shape':
      return `(${type}) ${name.replace(/ \/ .*$/s, '').slice(0, 40)}`;
    case 'string':
    case 'concatenated string':
    case 'sliced string':
      return `(${type})`;
    default:
      return `(${type})`;
  }
}

/** New objects of `after` (absent from `before`), grouped by kind and by retainer. */
export function heapDiff(beforeFile, afterFile, depth = 3) {
  const before = loadSnapshot(beforeFile);
  const ids = new Set();
  for (let i = 0; i < before.count; i++) ids.add(before.node(i).id);
  const after = loadSnapshot(afterFile);
  const fresh = new Uint8Array(after.count);
  const info = new Array(after.count);
  for (let i = 0; i < after.count; i++) {
    const n = after.node(i);
    info[i] = n;
    if (!ids.has(n.id)) fresh[i] = 1;
  }
  // The first strong retainer of each new node, preferring one that is new itself.
  const retainer = new Int32Array(after.count).fill(-1);
  const via = new Array(after.count);
  for (let i = 0; i < after.count; i++) {
    for (const edge of after.edgesOf(i)) {
      if (edge.type === 'weak' || !fresh[edge.to]) continue;
      const current = retainer[edge.to];
      if (current === -1 || (!fresh[current] && fresh[i])) {
        retainer[edge.to] = i;
        via[edge.to] = edge.name;
      }
    }
  }
  const byKind = new Map();
  const byRetainer = new Map();
  const byPath = new Map();
  const add = (map, key, size) => {
    const row = map.get(key) ?? { count: 0, bytes: 0 };
    row.count++;
    row.bytes += size;
    map.set(key, row);
  };
  for (let i = 0; i < after.count; i++) {
    if (!fresh[i]) continue;
    const n = info[i];
    add(byKind, kindOf(n), n.size);
    const r = retainer[i];
    add(byRetainer, r === -1 ? `(none) → ${kindOf(n)}` : `${kindOf(info[r])} .${via[i]} → ${kindOf(n)}`, n.size);
    // The path to it over up to `depth` retainers.
    let path = kindOf(n);
    for (let j = i, d = 0; d < depth && retainer[j] !== -1; d++, j = retainer[j])
      path = `${kindOf(info[retainer[j]])} .${via[j]} → ${path}`;
    add(byPath, path, n.size);
  }
  return { byKind, byRetainer, byPath };
}

export function table(map, clients, rows) {
  const sorted = [...map.entries()].sort((a, b) => b[1].bytes - a[1].bytes);
  const total = sorted.reduce((n, [, r]) => n + r.bytes, 0);
  const lines = [`total ${(total / clients).toFixed(0)} B per client`, 'B/client  n/client  group'];
  for (const [key, r] of sorted.slice(0, rows)) {
    lines.push(`${(r.bytes / clients).toFixed(0).padStart(8)}  ${(r.count / clients).toFixed(2).padStart(8)}  ${key}`);
  }
  return lines.join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [beforeFile, afterFile, clients, rows = '60'] = process.argv.slice(2);
  const { byKind, byRetainer, byPath } = heapDiff(beforeFile, afterFile);
  process.stdout.write(`## by kind\n${table(byKind, Number(clients), Number(rows))}\n\n`);
  process.stdout.write(`## by retainer\n${table(byRetainer, Number(clients), Number(rows))}\n\n`);
  process.stdout.write(`## by path (three retainers)\n${table(byPath, Number(clients), Number(rows))}\n`);
}
