/** Command-line options of `npm run soak` (scripts/soak.mjs passes them through). */
export interface SoakOptions {
  /** Traffic duration; the fault schedule is planned within it. */
  seconds: number;
  seed: number;
  redis: 'single' | 'sentinel';
  replicas: number;
  clients: number;
  runtimes: number;
  bots: number;
  /** Each client sends one message per this period (jittered). */
  sendEveryMs: number;
  /** Each runtime broadcasts to each bot's clients once per this period (jittered). */
  broadcastEveryMs: number;
  /** Every n-th message of a user is answered by a streamed reply (0: none). */
  streamEvery: number;
  /** Without the network-namespace faults even as root. */
  netns: boolean;
  /** A hostile tenant floods beside the traffic (docs/soak.md); off with --no-hostile. */
  hostile: boolean;
  /** Where to write the result as JSON. */
  json: string | undefined;
  /** Keep the run directory (logs, records) even when the run passed. */
  keep: boolean;
}

export const USAGE = `npm run soak -- [--seconds=60] [--seed=<n>] [--redis=sentinel|single] [--clients=200] [--runtimes=4]
  [--bots=2] [--send-every-ms=6000] [--broadcast-every-ms=8000] [--stream-every=3] [--no-netns] [--no-hostile] [--json=<file>] [--keep]
npm run soak -- --outage [--widgets=2000] [--outage-seconds=60] [--backoff-cap-ms=<n>] [--edge-max-fails=3] [--json=<file>]`;

export function parseArgs(argv: readonly string[]): Record<string, string> {
  const args: Record<string, string> = {};
  for (const arg of argv) {
    const m = /^--([a-z-]+)(?:=(.*))?$/s.exec(arg);
    if (!m) throw new Error(`unknown argument ${arg}\n${USAGE}`);
    args[m[1]] = m[2] ?? 'true';
  }
  return args;
}

export function number(args: Record<string, string>, name: string, fallback: number): number {
  if (args[name] === undefined) return fallback;
  const n = Number(args[name]);
  if (!Number.isFinite(n) || n < 0) throw new Error(`--${name} must be a non-negative number, not ${args[name]}\n${USAGE}`);
  return n;
}

export function soakOptions(args: Record<string, string>): SoakOptions {
  const known = [
    'seconds',
    'seed',
    'redis',
    'replicas',
    'clients',
    'runtimes',
    'bots',
    'send-every-ms',
    'broadcast-every-ms',
    'stream-every',
    'no-netns',
    'no-hostile',
    'json',
    'keep',
  ];
  for (const name of Object.keys(args)) if (!known.includes(name)) throw new Error(`unknown option --${name}\n${USAGE}`);
  const redis = args.redis ?? 'sentinel';
  if (redis !== 'single' && redis !== 'sentinel') throw new Error(`--redis must be single or sentinel, not ${redis}`);
  return {
    seconds: number(args, 'seconds', 60),
    seed: args.seed === undefined ? Math.floor(Math.random() * 2 ** 31) : number(args, 'seed', 0),
    redis,
    replicas: number(args, 'replicas', 3),
    clients: number(args, 'clients', 200),
    runtimes: number(args, 'runtimes', 4),
    bots: number(args, 'bots', 2),
    sendEveryMs: number(args, 'send-every-ms', 6000),
    broadcastEveryMs: number(args, 'broadcast-every-ms', 8000),
    streamEvery: number(args, 'stream-every', 3),
    netns: args['no-netns'] === undefined,
    hostile: args['no-hostile'] === undefined,
    json: args.json,
    keep: args.keep !== undefined,
  };
}
