import { prng } from '../helpers/prng';

/** Every fault a soak can inject. */
export const FAULT_KINDS = [
  'replica-kill',
  'replica-freeze',
  'redis-restart',
  'sentinel-failover',
  'netns-partition',
  'netns-latency',
  'netns-loss',
  'runtime-kill',
  'client-burst',
] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

/** Faults on shared infrastructure run one after the other; peer faults run beside them. */
const INFRA: readonly FaultKind[] = [
  'replica-kill',
  'replica-freeze',
  'redis-restart',
  'sentinel-failover',
  'netns-partition',
  'netns-latency',
  'netns-loss',
];
const PEER: readonly FaultKind[] = ['runtime-kill', 'client-burst'];

export interface Fault {
  kind: FaultKind;
  /** Planned start, ms after the traffic started. */
  at: number;
  /** How long the fault lasts (down, frozen, cut, slowed) in ms; 0 for instantaneous ones. */
  durationMs: number;
  /** Replica index, runtime index, or how many clients drop, depending on the kind. */
  target: number;
}

export interface ScheduleOptions {
  seed: number;
  /** Traffic duration in ms; no fault is planned to start after it. */
  durationMs: number;
  replicas: number;
  runtimes: number;
  clients: number;
  /** Kinds this run cannot inject (no Sentinel, no network namespace). */
  unavailable: ReadonlySet<FaultKind>;
}

/** How long each infrastructure fault keeps the next one waiting, beyond its own duration (restarts, promotion). */
const SETTLE_MS: Partial<Record<FaultKind, number>> = { 'replica-kill': 3000, 'redis-restart': 3000, 'sentinel-failover': 8000 };

/**
 * The fault schedule of a seed: the same seed and options give the same list, so a failing run
 * replays. Every available kind comes once, in a shuffled order, before any repeats, so even a short
 * run covers them all (planned past `durationMs` if need be: the traffic then runs until it ends).
 */
export function buildSchedule(options: ScheduleOptions): Fault[] {
  const random = prng(options.seed);
  const between = (min: number, max: number) => Math.round(min + random() * (max - min));
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)];
  const shuffled = <T>(items: readonly T[]): T[] => {
    const copy = [...items];
    for (let i = copy.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [copy[i], copy[j]] = [copy[j], copy[i]];
    }
    return copy;
  };
  const available = (kinds: readonly FaultKind[]) => kinds.filter((k) => !options.unavailable.has(k));
  const faults: Fault[] = [];
  const draw = (kind: FaultKind, at: number): Fault => {
    switch (kind) {
      case 'replica-kill':
        return { kind, at, durationMs: between(1000, 4000), target: between(0, options.replicas - 1) };
      case 'replica-freeze':
        return { kind, at, durationMs: between(5000, 15_000), target: between(0, options.replicas - 1) };
      case 'redis-restart':
      case 'sentinel-failover':
        return { kind, at, durationMs: 0, target: 0 };
      case 'netns-partition':
      case 'netns-latency':
      case 'netns-loss':
        return { kind, at, durationMs: between(3000, 6000), target: options.replicas - 1 };
      case 'runtime-kill':
        return { kind, at, durationMs: between(500, 3000), target: between(0, options.runtimes - 1) };
      case 'client-burst':
        return { kind, at, durationMs: 0, target: between(Math.ceil(options.clients / 20), Math.ceil(options.clients / 4)) };
    }
  };

  const infra = available(INFRA);
  let t = 3000;
  for (const kind of shuffled(infra)) {
    const fault = draw(kind, t);
    faults.push(fault);
    t += fault.durationMs + (SETTLE_MS[kind] ?? 0) + between(1000, 2000);
  }
  while (infra.length > 0 && t < options.durationMs - 5000) {
    const fault = draw(pick(infra), t);
    faults.push(fault);
    t += fault.durationMs + (SETTLE_MS[fault.kind] ?? 0) + between(1000, 3000);
  }

  const peer = available(PEER);
  let p = 2000;
  for (const kind of shuffled(peer)) {
    faults.push(draw(kind, p));
    p += between(3000, 8000);
  }
  while (peer.length > 0 && p < options.durationMs - 3000) {
    faults.push(draw(pick(peer), p));
    p += between(3000, 8000);
  }
  return faults.sort((a, b) => a.at - b.at);
}

/** Whether a kind runs on the sequential infrastructure track. */
export function isInfra(kind: FaultKind): boolean {
  return INFRA.includes(kind);
}

/** One line per fault, for the report and for comparing two runs of one seed. */
export function describeSchedule(faults: readonly Fault[]): string[] {
  return faults.map((f) => {
    const what =
      f.kind === 'client-burst'
        ? `${f.target} clients`
        : f.kind === 'runtime-kill'
          ? `runtime ${f.target}, back after ${f.durationMs} ms`
          : f.kind.startsWith('replica') || f.kind.startsWith('netns')
            ? `hub-${f.target + 1}${f.durationMs ? ` for ${f.durationMs} ms` : ''}`
            : '';
    return `${(f.at / 1000).toFixed(1).padStart(6)} s  ${f.kind}${what ? ` (${what})` : ''}`;
  });
}
