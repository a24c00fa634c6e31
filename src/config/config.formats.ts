import convict from 'convict';
import { DURATION_PATTERN } from './duration';

/** The JWT algorithms the hub accepts: HMAC only, so no key can be confused for another kind. */
export const SAFE_ALGORITHMS = ['HS256', 'HS384', 'HS512'] as const;
export type JwtAlgorithm = (typeof SAFE_ALGORITHMS)[number];

// The formats the schema's keys name (src/config/schema/), registered once when this module loads.

// Numbers are digits only: convict's own `nat` and `port` read a value by its leading digits with
// parseInt, so "64Ki" became 64 bytes, "30s" 30 ms and "512Mi" a memory limit of 512 bytes (which
// would refuse every handshake), silently. Anything else stays a string and fails validation with
// the variable's name.
const digitsOnly = (value: unknown) => (typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value);

convict.addFormats({
  'whole-number': {
    validate(value: unknown) {
      if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) throw new Error('must be a whole number (digits only)');
    },
    coerce: digitsOnly,
  },
  'positive-int': {
    validate(value: unknown) {
      if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1)
        throw new Error('must be an integer of at least 1 (digits only)');
    },
    coerce: digitsOnly,
  },
  'byte-count': {
    validate(value: unknown) {
      if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0)
        throw new Error('must be a whole number of bytes (digits only, e.g. 536870912)');
    },
    coerce: digitsOnly,
  },
  'tcp-port': {
    validate(value: unknown) {
      if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > 65535)
        throw new Error('must be a port number from 0 to 65535');
    },
    coerce: digitsOnly,
  },
  // A share of something, 0–1 inclusive (0 usually switches the feature off).
  ratio: {
    validate(value: unknown) {
      if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > 1) throw new Error('must be a number from 0 to 1');
    },
    coerce: (value: unknown) => (typeof value === 'string' && /^\d*\.?\d+$/.test(value) ? Number(value) : value),
  },
  'comma-list': {
    validate(value: unknown) {
      if (value === null) return;
      if (!Array.isArray(value) || value.some((v) => typeof v !== 'string' || v.length === 0)) {
        throw new Error('must be a comma-separated list of non-empty strings');
      }
    },
    coerce: (value: unknown) => splitList(value),
  },
  'secret-list': {
    validate(value: unknown) {
      if (value === null) return;
      if (!Array.isArray(value) || value.some((v) => typeof v !== 'string' || v.length < 16)) {
        throw new Error('must be a comma-separated list of secrets of at least 16 characters each');
      }
    },
    coerce: (value: unknown) => splitList(value),
  },
  // Former JWT secrets still verify tokens, so a weak one is as good as a weak JWT_SECRET to a forger.
  'jwt-secret-list': {
    validate(value: unknown) {
      if (value === null) return;
      if (!Array.isArray(value) || value.some((v) => typeof v !== 'string' || v.length < 32)) {
        throw new Error('must be a comma-separated list of secrets of at least 32 characters each, as strong as JWT_SECRET');
      }
    },
    coerce: (value: unknown) => splitList(value),
  },
  secret: {
    validate(value: unknown) {
      if (value === null) return;
      if (typeof value !== 'string' || value.length < 32) {
        throw new Error('must be a secret of at least 32 characters');
      }
    },
  },
  'jwt-algorithms': {
    validate(value: unknown) {
      if (!Array.isArray(value) || value.length === 0) throw new Error('must list at least one algorithm');
      for (const a of value as unknown[]) {
        if (!(SAFE_ALGORITHMS as readonly unknown[]).includes(a)) {
          throw new Error(`unsupported algorithm "${String(a)}"; allowed: ${SAFE_ALGORITHMS.join(', ')}`);
        }
      }
    },
    coerce: (value: unknown) => splitList(value),
  },
  // convict's Boolean turns any string but "false" into true; a typo must fail instead.
  'strict-boolean': {
    validate(value: unknown) {
      if (typeof value !== 'boolean') throw new Error('must be true or false');
    },
    coerce(value: unknown) {
      if (value === 'true' || value === '1') return true;
      if (value === 'false' || value === '0') return false;
      return value;
    },
  },
  duration: {
    validate(value: unknown) {
      if (typeof value !== 'string' || !DURATION_PATTERN.test(value)) {
        throw new Error('must look like 15m, 1h, 7d (a number 1–99999 followed by s, m, h or d)');
      }
    },
  },
  'optional-string': {
    validate(value: unknown) {
      if (value !== null && (typeof value !== 'string' || value.length === 0)) {
        throw new Error('must be a non-empty string when set');
      }
    },
  },
  'public-url': {
    validate(value: unknown) {
      if (value === null) return;
      let url: URL | undefined;
      try {
        url = typeof value === 'string' ? new URL(value) : undefined;
      } catch {
        url = undefined;
      }
      if (!url || !['http:', 'https:'].includes(url.protocol) || url.search || url.hash || url.username || url.password) {
        throw new Error('must be an http:// or https:// URL with an optional path prefix (no query, fragment or credentials)');
      }
    },
    coerce: (value: unknown) => (typeof value === 'string' ? value.replace(/\/+$/, '') : value),
  },
  'redis-url': {
    validate(value: unknown) {
      if (value === null) return;
      if (typeof value !== 'string' || !/^rediss?:\/\/.+/.test(value)) {
        throw new Error('must be a redis:// or rediss:// URL');
      }
    },
  },
  // host:port,host:port — IPv6 hosts in brackets ([::1]:26379).
  'redis-nodes': {
    validate(value: unknown) {
      if (value === null) return;
      if (!Array.isArray(value) || value.length === 0) throw new Error('must be a comma-separated list of host:port');
      for (const node of value as unknown[]) {
        if (typeof node !== 'string' || parseHostPort(node) === null) {
          throw new Error(`"${String(node)}" is not host:port (port 1–65535; IPv6 in brackets, e.g. [::1]:6379)`);
        }
      }
    },
    coerce: (value: unknown) => splitList(value),
  },
  'trust-proxy': {
    validate(value: unknown) {
      if (typeof value === 'boolean') return;
      if (typeof value === 'number' && Number.isInteger(value) && value >= 0) return;
      if (typeof value === 'string' && value.length > 0) return;
      throw new Error('must be true, false, a hop count, or a comma-separated list of trusted addresses/subnets');
    },
    coerce(value: unknown) {
      if (value === 'true') return true;
      if (value === 'false') return false;
      if (typeof value === 'string' && /^\d+$/.test(value)) return Number(value);
      return value;
    },
  },
});

/** `host:port` or `[v6]:port` → its parts, or null when malformed. */
export function parseHostPort(value: string): { host: string; port: number } | null {
  const match = /^(?:\[([0-9a-fA-F:.]+)\]|([A-Za-z0-9._-]+)):(\d{1,5})$/.exec(value);
  if (!match) return null;
  const port = Number(match[3]);
  if (port < 1 || port > 65535) return null;
  return { host: match[1] ?? match[2], port };
}

function splitList(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  return value
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}
