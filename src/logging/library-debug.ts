import { preloadModule, resolveFrom } from '../internals/node-require.internals';

/**
 * The packages on the message path whose `debug` loggers run on every packet: Socket.IO, its
 * parser and adapters, Engine.IO, ioredis.
 */
const CHATTY = ['socket.io', 'socket.io-parser', 'socket.io-adapter', '@socket.io/redis-adapter', 'engine.io', 'ioredis'];

/** A logger of the `debug` package's shape that is never enabled. */
interface QuietLogger {
  (...args: unknown[]): void;
  namespace: string;
  enabled: boolean;
  log: (...args: unknown[]) => void;
  extend(namespace: string, delimiter?: string): QuietLogger;
  destroy(): void;
}

function noop(): void {}

function createQuietLogger(namespace: string): QuietLogger {
  return Object.assign(() => {}, {
    namespace,
    enabled: false,
    log: noop,
    extend: (sub: string, delimiter = ':') => createQuietLogger(`${namespace}${delimiter}${sub}`),
    destroy: noop,
  });
}

/**
 * A `debug` module that makes quiet loggers, with the real module's own API otherwise (`enable`,
 * `formatters`, …; its ES `default` and named `debug` exports are the quiet factory too).
 */
function quietModule(real: object): typeof createQuietLogger {
  const factory = Object.assign((namespace: string) => createQuietLogger(namespace), real);
  return Object.assign(factory, { default: factory, debug: factory, enabled: () => false });
}

/**
 * Unless `DEBUG` is set, gives the libraries on the message path a `debug` module whose loggers are
 * empty functions. A disabled logger of the real module still costs each call a rest-arguments array
 * and an accessor on the logger, and Socket.IO and Engine.IO call theirs several times per packet:
 * about 3 % of a replica's CPU and 6 KB allocated per relayed round trip (`npm run bench:profile`).
 * With `DEBUG` set (`DEBUG=socket.io:*`, …) nothing is replaced, so their debug output works as
 * documented. Must run before those libraries are loaded: `main.ts` calls it before it imports the
 * hub. Returns the `debug` module files it replaced.
 */
export function quietLibraryDebug(): string[] {
  if (process.env.DEBUG) return [];
  const replaced = new Set<string>();
  for (const name of CHATTY) {
    const found = resolveFrom(name, 'debug');
    // Not installed, or it has no `debug` of its own to resolve.
    if (found === null || replaced.has(found.path)) continue;
    preloadModule(found.path, quietModule(found.load(found.path) as object));
    replaced.add(found.path);
  }
  return [...replaced];
}
