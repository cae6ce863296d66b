import type { BenchResult } from './result-file.js';
import type { Distribution } from './stats.js';
import { table } from './text-output.js';

/** Two result files side by side: each figure, and the second over the first. */
export interface CompareRow {
  measure: string;
  before: number | null;
  after: number | null;
  /** after / before (null when either is missing or before is 0). */
  ratio: number | null;
}

export function compareResults(before: BenchResult, after: BenchResult): CompareRow[] {
  const rows: CompareRow[] = [];
  const add = (
    measure: string,
    a: number | null | undefined,
    b: number | null | undefined,
  ): void => {
    const x = a ?? null;
    const y = b ?? null;
    rows.push({
      measure,
      before: x,
      after: y,
      ratio: x !== null && y !== null && x !== 0 ? y / x : null,
    });
  };
  const dist = (name: string, f: (r: BenchResult) => Distribution | null): void => {
    for (const q of ['p50', 'p95', 'p99'] as const) {
      add(`${name} ${q} (ms)`, f(before)?.[q], f(after)?.[q]);
    }
  };
  dist('voice-to-voice', (r) => r.summary.voiceToVoiceMs);
  dist('added', (r) => r.summary.addedMs);
  dist('barge-in stop', (r) => r.summary.bargeInStopMs);
  const share = (r: BenchResult, k: 'falseInterruptions' | 'cutOffs'): number | null =>
    r.summary[k].of === 0 ? null : r.summary[k].count / r.summary[k].of;
  add(
    'false interruption rate',
    share(before, 'falseInterruptions'),
    share(after, 'falseInterruptions'),
  );
  add('cut-off rate', share(before, 'cutOffs'), share(after, 'cutOffs'));
  const perTurn = (r: BenchResult): number | null =>
    r.summary.turns === 0 ? null : (r.summary.lateChunks + r.summary.holes) / r.summary.turns;
  add('late chunks + holes per turn', perTurn(before), perTurn(after));
  add('failed calls', before.summary.failedCalls, after.summary.failedCalls);
  add('server CPU (%)', before.server?.cpuPercent, after.server?.cpuPercent);
  add('capacity: calls per core', before.capacity?.callsPerCore, after.capacity?.callsPerCore);
  add(
    'capacity: memory per call (bytes)',
    before.capacity?.memoryPerCallBytes,
    after.capacity?.memoryPerCallBytes,
  );
  return rows;
}

export function compareText(
  before: BenchResult,
  after: BenchResult,
  names: [string, string],
): string {
  const number = (v: number | null): string =>
    v === null ? '–' : Math.abs(v) >= 100 ? v.toFixed(0) : v.toFixed(Math.abs(v) < 1 ? 3 : 1);
  const lines = [
    table([
      ['Measure', names[0], names[1], 'ratio'],
      ...compareResults(before, after).map((r) => [
        r.measure,
        number(r.before),
        number(r.after),
        r.ratio === null ? '–' : `${r.ratio.toFixed(2)}×`,
      ]),
    ]),
  ];
  const a = before.machine;
  const b = after.machine;
  if (a.cpuModel !== b.cpuModel || a.cores !== b.cores || a.nodeVersion !== b.nodeVersion) {
    lines.push(
      '',
      `warning: different machines (${a.cores} × ${a.cpuModel}, Node ${a.nodeVersion} vs ` +
        `${b.cores} × ${b.cpuModel}, Node ${b.nodeVersion}): ratios mix machine and code.`,
    );
  }
  return lines.join('\n');
}
