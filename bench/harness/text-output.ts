import type { Progress } from './runner.js';
import type { BenchResult, Rate } from './result-file.js';
import type { Distribution } from './stats.js';

/** Terminal output: the live progress line and the summary table. */
export function progressLine(p: Progress): string {
  const v2v =
    p.voiceToVoiceP50Ms === null
      ? 'v2v –'
      : `v2v p50 ${ms(p.voiceToVoiceP50Ms)} p95 ${ms(p.voiceToVoiceP95Ms)}`;
  return (
    `calls ${p.callsDone}/${p.callsTotal} done, ${p.callsRunning} running, ${p.callsFailed} failed · ` +
    `turns ${p.turnsDone} · ${v2v} · ${(p.elapsedMs / 1000).toFixed(1)} s`
  );
}

/** Rewrites one terminal line (TTY) or prints a line every `everyMs` (logs). */
export class ProgressDisplay {
  readonly #stream: NodeJS.WriteStream;
  readonly #everyMs: number;
  #lastMs = Number.NEGATIVE_INFINITY;

  constructor(stream: NodeJS.WriteStream = process.stderr, everyMs = 5000) {
    this.#stream = stream;
    this.#everyMs = everyMs;
  }

  update(progress: Progress): void {
    const line = progressLine(progress);
    if (this.#stream.isTTY) {
      this.#stream.write(`\r\x1b[2K${line}`);
    } else if (progress.elapsedMs - this.#lastMs >= this.#everyMs) {
      this.#lastMs = progress.elapsedMs;
      this.#stream.write(`${line}\n`);
    }
  }

  done(): void {
    if (this.#stream.isTTY) {
      this.#stream.write('\n');
    }
  }
}

export function ms(value: number | null | undefined): string {
  if (value === null || value === undefined || !Number.isFinite(value)) {
    return '–';
  }
  return `${value.toFixed(Math.abs(value) < 10 ? 1 : 0)} ms`;
}

function rate(r: Rate): string {
  return r.of === 0 ? '–' : `${r.count}/${r.of} (${((100 * r.count) / r.of).toFixed(1)} %)`;
}

function distributionRow(name: string, d: Distribution | null): string[] {
  return d === null
    ? [name, '0', '–', '–', '–', '–']
    : [name, String(d.count), ms(d.p50), ms(d.p95), ms(d.p99), ms(d.max)];
}

/** Aligned columns; numbers right-aligned. */
export function table(rows: readonly string[][]): string {
  const widths = rows[0]!.map((_, column) =>
    Math.max(...rows.map((r) => (r[column] ?? '').length)),
  );
  return rows
    .map((row) =>
      row
        .map((cell, column) =>
          column === 0 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!),
        )
        .join('  '),
    )
    .join('\n');
}

export function summaryText(result: BenchResult): string {
  const s = result.summary;
  const m = result.machine;
  const rows = [
    ['Measure', 'n', 'p50', 'p95', 'p99', 'max'],
    distributionRow('voice-to-voice', s.voiceToVoiceMs),
    distributionRow('added (v2v − expected)', s.addedMs),
    distributionRow('barge-in stop', s.bargeInStopMs),
    distributionRow('barge-in → clear message', s.clearMs),
    ...Object.entries(s.stagesMs).map(([stage, d]) => distributionRow(`stage ${stage}`, d)),
  ];
  const lines = [
    `${result.label}: ${s.calls} calls (${s.failedCalls} failed), ${s.turns} turns, ` +
      `${(result.durationMs / 1000).toFixed(1)} s on ${m.cores} × ${m.cpuModel}, Node ${m.nodeVersion}`,
    '',
    table(rows),
    '',
    `false interruptions ${rate(s.falseInterruptions)} · cut-offs ${rate(s.cutOffs)} · ` +
      `interruptions during speech ${rate(s.bargeIns)}`,
    `assistant audio: ${s.lateChunks} late chunks, ${s.holes} holes (${ms(s.holeMs)}), ` +
      `${s.silentGaps} silent gaps · missing replies ${s.missingReplies} · skipped turns ${s.skippedTurns}`,
    `harness: pacing late p99 ${ms(result.pacing.lateP99Ms)}, max ${ms(result.pacing.lateMaxMs)}, ` +
      `CPU ${result.harnessCpuPercent.toFixed(0)} %` +
      (result.server === null
        ? ''
        : ` · server CPU ${result.server.cpuPercent.toFixed(0)} %, peak RSS ${(result.server.peakRssBytes / 2 ** 20).toFixed(0)} MiB`) +
      vendorsText(result.target.self?.vendors),
  ];
  if (Object.keys(s.errors).length > 0) {
    lines.push(
      `errors: ${Object.entries(s.errors)
        .map(([code, n]) => `${code} × ${n}`)
        .join(', ')}`,
    );
  }
  if (result.capacity !== null) {
    const c = result.capacity;
    lines.push(
      '',
      table([
        [
          'Concurrent calls',
          'added p50',
          'added p99',
          'misses',
          'failed',
          'server CPU',
          'RSS',
          'harness late p99',
        ],
        ...c.points.map((p) => [
          String(p.concurrency),
          ms(p.addedP50Ms),
          ms(p.addedP99Ms),
          String(p.deadlineMisses),
          String(p.failedCalls),
          p.cpuPercent === null ? '–' : `${p.cpuPercent.toFixed(0)} %`,
          p.rssBytes === null ? '–' : `${(p.rssBytes / 2 ** 20).toFixed(0)} MiB`,
          ms(p.pacingLateP99Ms),
        ]),
      ]),
      `capacity: ${c.maxConcurrency} calls (${c.callsPerCore.toFixed(1)} per core), limited by ${c.limit}` +
        (c.memoryPerCallBytes === null
          ? ''
          : ` · ${(c.memoryPerCallBytes / 2 ** 20).toFixed(2)} MiB per call`) +
        (c.cpuPerCallPercent === null ? '' : ` · ${c.cpuPerCallPercent.toFixed(2)} % CPU per call`),
    );
  }
  return lines.join('\n');
}

/** The vendor simulators' CPU in `--self` runs (they share the machine with Parla). */
function vendorsText(usage: unknown): string {
  const cpu = (usage as { cpuPercent?: unknown } | undefined)?.cpuPercent;
  return typeof cpu === 'number' ? ` · vendor simulators CPU ${cpu.toFixed(0)} %` : '';
}
