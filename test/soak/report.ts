import type { CheckResult } from './checker';
import type { FaultKind } from './schedule';

export interface FaultRun {
  kind: FaultKind;
  plannedAt: number;
  startedAt: number;
  endedAt: number;
  note: string;
  error?: string;
}

export interface SoakResult {
  pass: boolean;
  seed: number;
  redis: string;
  seconds: number;
  wallSeconds: number;
  netns: string;
  schedule: string[];
  faults: FaultRun[];
  faultCounts: Partial<Record<FaultKind, number>>;
  check: CheckResult;
}

/** The verdict table and the counts, as markdown (what the CLI prints and docs/soak.md quotes). */
export function formatResult(r: SoakResult): string {
  const rows = r.check.verdicts.map(
    (v) => `| ${v.pass ? 'PASS' : '**FAIL**'} | ${v.rule} | ${v.checked} | ${v.detail.replace(/\|/g, '\\|')} |`,
  );
  const c = r.check.counts;
  const faults = Object.entries(r.faultCounts)
    .map(([k, n]) => `${k} ×${n}`)
    .join(', ');
  return [
    `soak ${r.pass ? 'PASSED' : 'FAILED'}: seed ${r.seed}, Redis ${r.redis}, ${r.seconds} s of traffic, ${r.wallSeconds} s wall (replay: npm run soak -- --seed=${r.seed} --seconds=${r.seconds} --redis=${r.redis})`,
    `network namespace: ${r.netns}`,
    `faults run: ${faults}`,
    '',
    '| verdict | rule | checked | detail |',
    '|---|---|---|---|',
    ...rows,
    '',
    `client messages ${c.sends} (ok ${c.sendsOk}), replies ${c.replies} (ok ${c.repliesOk}), broadcasts ${c.broadcasts} (ok ${c.broadcastsOk}), streams ${c.streams} (ok ${c.streamsOk}); ${c.deliveriesChecked} reply/broadcast deliveries checked`,
    ...r.check.info.map((line) => `note: ${line}`),
  ].join('\n');
}
