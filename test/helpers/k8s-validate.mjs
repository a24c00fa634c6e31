// Validates Kubernetes objects against the OpenAPI schemas of the Kubernetes API (npm kubernetes-models,
// generated from Kubernetes v1.36.0's spec, which holds every GA and beta API of 1.35) and of the
// Prometheus Operator's CRDs (@kubernetes-models/prometheus-operator). Run as a child process because
// both packages are ES modules only: reads a JSON array of objects on stdin, writes a JSON array of
// { apiVersion, kind, name, errors } on stdout, one per object, `errors` empty when it is valid.
//
// Beyond the schemas, unknown fields are errors, as they are for kubectl (field validation Strict):
// the OpenAPI schemas leave objects open, so a misspelt `readinesProbe` would pass them. The
// generated validators read every property they know by name, and walk maps key by key; the object
// is handed to them behind a Proxy that records those reads, and a key never read under an object
// that was never walked is a field the schema does not have.

const MODULES = {
  'monitoring.coreos.com': (version, kind) => `@kubernetes-models/prometheus-operator/monitoring.coreos.com/${version}/${kind}`,
};

function modulePath(apiVersion, kind) {
  const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['', apiVersion];
  if (MODULES[group]) return MODULES[group](version, kind);
  return group ? `kubernetes-models/${group}/${version}/${kind}` : `kubernetes-models/${version}/${kind}`;
}

const isPlainObject = (value) => value !== null && typeof value === 'object' && !Array.isArray(value);

/** Wraps `root` so that property reads (`read`) and key walks (`walked`) are recorded by path. */
function recorded(root) {
  const read = new Map();
  const walked = new Set();
  const wrap = (value, path) => {
    if (value === null || typeof value !== 'object') return value;
    return new Proxy(value, {
      get(target, key, receiver) {
        if (typeof key === 'string') {
          if (!read.has(path)) read.set(path, new Set());
          read.get(path).add(key);
          const child = Reflect.get(target, key, receiver);
          return Object.hasOwn(target, key) ? wrap(child, `${path}/${key}`) : child;
        }
        return Reflect.get(target, key, receiver);
      },
      ownKeys(target) {
        walked.add(path);
        return Reflect.ownKeys(target);
      },
    });
  };
  return { proxy: wrap(root, ''), read, walked };
}

function unknownFields(value, path, read, walked, found) {
  if (Array.isArray(value)) {
    value.forEach((item, i) => unknownFields(item, `${path}/${i}`, read, walked, found));
  } else if (isPlainObject(value)) {
    for (const [key, child] of Object.entries(value)) {
      if (!walked.has(path) && !read.get(path)?.has(key)) found.push(`${path || '/'}: unknown field "${key}"`);
      else unknownFields(child, `${path}/${key}`, read, walked, found);
    }
  }
}

async function validate(object) {
  const { apiVersion, kind } = object ?? {};
  const name = object?.metadata?.name;
  if (typeof apiVersion !== 'string' || typeof kind !== 'string') return { apiVersion, kind, name, errors: ['no apiVersion/kind'] };
  let Model;
  try {
    Model = (await import(modulePath(apiVersion, kind)))[kind];
  } catch {
    // not found below
  }
  if (typeof Model !== 'function') return { apiVersion, kind, name, errors: [`no schema for ${apiVersion} ${kind}`] };
  const { proxy, read, walked } = recorded(object);
  const errors = [];
  try {
    Model.prototype.validate.call(proxy);
  } catch (err) {
    if (!Array.isArray(err.errors)) throw err;
    for (const e of err.errors) errors.push(`${e.instancePath || '/'} ${e.message ?? e.keyword} ${JSON.stringify(e.params)}`);
  }
  unknownFields(object, '', read, walked, errors);
  return { apiVersion, kind, name, errors };
}

let input = '';
process.stdin.setEncoding('utf8');
for await (const chunk of process.stdin) input += chunk;
const results = [];
for (const object of JSON.parse(input)) results.push(await validate(object));
process.stdout.write(JSON.stringify(results));
