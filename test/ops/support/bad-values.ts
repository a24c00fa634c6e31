// One bad value for every constraint of helm/relay-hub/values.schema.json, derived from the schema
// itself, so a constraint added later gets its case without anyone writing it: for each key, a value
// breaking its minimum, maximum, pattern, enum, length, item count or type; a `required` key removed
// (null removes a key from Helm's merged values); an unknown key beside every closed object; a
// lower-case config name. Each case says what Helm's refusal must name.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CHART, type Values } from './chart';

interface Schema {
  $ref?: string;
  type?: string | string[];
  minimum?: number;
  maximum?: number;
  pattern?: string;
  enum?: unknown[];
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  anyOf?: Schema[];
  properties?: Record<string, Schema>;
  additionalProperties?: boolean | Schema;
  propertyNames?: Schema;
  required?: string[];
  items?: Schema;
}

export interface BadValue {
  /** The top-level key the case changes ('' for the root). */
  top: string;
  /** What is wrong, for the test name. */
  what: string;
  /** The JSON pointer of the key (the parent object for unknown or missing keys). */
  pointer: string;
  /** Values (on top of the base values) carrying the bad value. */
  values: Values;
  /** Strings Helm's message must contain: the pointer or the key it names. */
  names: string[];
}

export const schema = JSON.parse(readFileSync(join(CHART, 'values.schema.json'), 'utf8')) as Schema & {
  definitions: Record<string, Schema>;
};

function deref(node: Schema): Schema {
  return node.$ref ? deref(schema.definitions[node.$ref.replace('#/definitions/', '')]) : node;
}

const REMOVE = Symbol('remove');

/**
 * Values that change the key at `path` of `defaults`: the top-level subtree copied whole (Helm merges
 * maps key by key but replaces lists, so list items keep their other keys), the key set to `value`,
 * or removed when `value` is REMOVE (null in a map, which Helm's merge deletes; dropped in a list item).
 */
function changed(defaults: Values, path: string[], value: unknown): Values {
  if (path.length === 0) return value as Values;
  const root: Values = { [path[0]]: structuredClone(defaults[path[0]]) };
  let parent: any = root;
  let inList = false;
  for (const key of path.slice(0, -1)) {
    if (parent[key] === undefined || parent[key] === null) parent[key] = {};
    inList ||= Array.isArray(parent[key]);
    parent = parent[key];
  }
  const last = path[path.length - 1];
  if (value !== REMOVE) parent[last] = value;
  else if (inList) delete parent[last];
  else parent[last] = null;
  return root;
}

/** A JSON pointer, as Helm's messages spell it ('~' as ~0, '/' in a key as ~1). */
const pointerOf = (path: string[]) => path.map((key) => `/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`).join('');

function wrongType(type: string | string[] | undefined): unknown {
  const types = Array.isArray(type) ? type : [type];
  if (types.includes('string')) return { not: 'a string' };
  if (types.includes('integer') || types.includes('number')) return 'three';
  if (types.includes('boolean')) return 'yes';
  if (types.includes('object')) return 'not an object';
  if (types.includes('array')) return 'not an array';
  return undefined;
}

const NOT_MATCHING = ['has spaces and !', '-', 'x', '1', 'no_such_value_x'];

/** Bad values for the key at `path` (schema `node`), its value in values.yaml being `current`. */
function casesAt(node: Schema, path: string[], current: unknown, defaults: Values): BadValue[] {
  node = deref(node);
  const out: BadValue[] = [];
  const pointer = pointerOf(path);
  const at = [`at '${pointer}':`];
  const add = (what: string, value: unknown, names = at, at_ = path) =>
    out.push({ top: at_[0] ?? '', what: `${pointer}: ${what}`, pointer, values: changed(defaults, at_, value), names });

  if (path.length > 0) {
    const bad = wrongType(node.type);
    if (bad !== undefined) add(`wrong type (${JSON.stringify(bad)} for ${String(node.type)})`, bad);
  }
  if (node.minimum !== undefined) add(`below minimum ${node.minimum}`, node.minimum - 1);
  if (node.maximum !== undefined) add(`above maximum ${node.maximum}`, node.maximum + 1);
  if (node.enum) add('not one of the allowed values', 'NotAnAllowedValue');
  if (node.pattern) {
    const re = new RegExp(node.pattern, 'u');
    const bad = NOT_MATCHING.find((c) => !re.test(c));
    if (bad === undefined) throw new Error(`no candidate breaks the pattern of ${pointer}`);
    add(`not matching ${node.pattern}`, bad);
  }
  if (node.minLength !== undefined && node.minLength > 0) add(`shorter than ${node.minLength}`, 'x'.repeat(node.minLength - 1));
  if (node.maxLength !== undefined) add(`longer than ${node.maxLength}`, 'x'.repeat(node.maxLength + 1));
  if (node.anyOf) {
    // Neither empty nor long enough, neither a count nor a percentage: a value every branch refuses.
    add('matching none of its forms (anyOf)', typeof current === 'string' || current === undefined ? 'x'.repeat(5) : 0);
  }
  if (node.minItems !== undefined) add(`fewer than ${node.minItems} items`, []);
  if (node.propertyNames) add('a key that is not a valid name', 'x', [`'lower_case'`], [...path, 'lower_case']);
  if (node.additionalProperties === false && node.properties) {
    add('an unknown key', true, [`'misspelt'`, 'not allowed'], [...path, 'misspelt']);
  }
  for (const key of node.required ?? []) {
    add(`without its required ${key}`, REMOVE, [`at '${pointer}'`, `missing property '${key}'`], [...path, key]);
  }
  for (const [key, child] of Object.entries(node.properties ?? {})) {
    const value = current && typeof current === 'object' ? (current as Values)[key] : undefined;
    out.push(...casesAt(child, [...path, key], value, defaults));
  }
  if (typeof node.additionalProperties === 'object' && current && typeof current === 'object') {
    // A map (config, annotations, resource quantities): its first key stands for all of them.
    const first = Object.entries(current)[0];
    if (first) out.push(...casesAt(node.additionalProperties, [...path, first[0]], first[1], defaults));
  }
  if (node.items) {
    const items = deref(node.items);
    if (Array.isArray(current) && current.length > 0) out.push(...casesAt(items, [...path, '0'], current[0], defaults));
    else if (items.required?.length) {
      add(
        `an item without its required ${items.required.join(', ')}`,
        [{}],
        [`at '${pointer}/0'`, `missing property '${items.required[0]}'`],
      );
    }
  }
  return out;
}

/** Every bad-value case of the schema; `defaults` is values.yaml (arrays in it are the items mutated). */
export function badValues(defaults: Values): BadValue[] {
  return casesAt(schema, [], defaults, defaults);
}

/**
 * The cases in batches that change distinct top-level keys, so one helm run checks several: Helm
 * reports every schema error at once, and each error names its own key.
 */
export function batches(cases: BadValue[]): BadValue[][] {
  const out: BadValue[][] = [];
  for (const c of cases) {
    let batch = out.find((b) => b.every((other) => other.top !== c.top));
    if (!batch) out.push((batch = []));
    batch.push(c);
  }
  return out;
}
