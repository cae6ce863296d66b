/**
 * The result of `npm run bench -- sip-load` (JSON, and the text table printed at the end): the
 * SIPp load and what it cost Parla, the probe calls' voice-to-voice latency and the arrival
 * jitter of Parla's RTP at them, and Parla's own per-turn breakdown of the SIPp calls.
 */
import type { MachineInfo, ProcessUsage } from './machine.js';
import type { Summary } from './result-file.js';
import type { RtpArrivalSummary } from './rtp-arrival-stats.js';
import type { CallResult, RunResult } from './runner.js';
import type { SippCounters } from './sipp-runner.js';
import { distribution, type Distribution } from './stats.js';
import { ms, table } from './text-output.js';

export const SIP_LOAD_FORMAT = 'parla-bench-sip-load/1';

export interface SipLoadResult {
  format: typeof SIP_LOAD_FORMAT;
  label: string;
  machine: MachineInfo;
  settings: {
    ratePerSecond: number;
    callSeconds: number;
    /** Seconds during which SIPp placed calls. */
    durationSeconds: number;
    /** rate × call length: the SIPp calls open in the steady state. */
    steadyCalls: number;
    probes: number;
    scripts: string[];
    /** Parla's worker threads, VAD and the vendor simulators' latencies. */
    self: Record<string, unknown>;
    expectedLatencyMs: number;
    /** Length of the caller pcap SIPp plays in each call. */
    callerAudioMs: number;
  };
  sipp: {
    exitCode: number | null;
    counters: SippCounters | null;
    inviteToOkMs: Distribution | null;
    cpuPercent: number | null;
    /** The end of SIPp's screen output when it did not exit 0. */
    outputTail: string | null;
  };
  /** From when the load reached its steady count to when SIPp stopped placing calls. */
  window: {
    seconds: number;
    /** Mean calls open: SIPp's (its statistics, once a second) plus probes running. */
    meanSippCalls: number | null;
    meanProbeCalls: number;
    /** Parla's CPU and memory over the window. */
    parla: ProcessUsage | null;
    /** Parla's CPU before any call (the idle process: timers, the store). */
    parlaIdleCpuPercent: number | null;
    vendors: ProcessUsage | null;
    /** Parla CPU ÷ mean calls open, % of one core. */
    cpuPerCallPercent: number | null;
    /** (Parla CPU − idle) ÷ mean calls open. */
    marginalCpuPerCallPercent: number | null;
    /** 100 ÷ cpuPerCallPercent: calls one core would carry at this cost per call. */
    callsPerCore: number | null;
    /** Probes still running when the window closed (their later turns were under less load). */
    probesOutlastedMs: number;
  };
  probes: {
    summary: Summary;
    pacing: RunResult['pacing'];
    /** Parla's RTP as received by each probe. */
    rtp: (RtpArrivalSummary & { call: number })[];
    calls: CallResult[];
  } | null;
  /** Parla's stored per-turn timings of the SIPp calls. */
  sippCallsStored: {
    calls: number;
    ended: number;
    endedReasons: Record<string, number>;
    turns: number;
    stagesMs: Record<string, Distribution>;
    /** turnLatency − the expected latency: Parla's own share of each SIPp call's turns. */
    ownAddedMs: Distribution | null;
  } | null;
  harnessCpuPercent: number;
  durationMs: number;
}

/** Distributions of each stage over every turn. */
export function stageDistributions(
  turns: readonly Record<string, number>[],
): Record<string, Distribution> {
  const byStage = new Map<string, number[]>();
  for (const stages of turns) {
    for (const [stage, value] of Object.entries(stages)) {
      const values = byStage.get(stage) ?? [];
      values.push(value);
      byStage.set(stage, values);
    }
  }
  const out: Record<string, Distribution> = {};
  for (const [stage, values] of byStage) {
    const d = distribution(values);
    if (d !== null) {
      out[stage] = d;
    }
  }
  return out;
}

function row(name: string, d: Distribution | null | undefined): string[] {
  return d === null || d === undefined
    ? [name, '0', '–', '–', '–', '–']
    : [name, String(d.count), ms(d.p50), ms(d.p95), ms(d.p99), ms(d.max)];
}

/** Packet gaps: to the histogram's 0.5 ms. */
function tenths(value: number | null): string {
  return value === null ? '–' : `${value.toFixed(1)} ms`;
}

function percent(value: number | null | undefined, digits = 0): string {
  return value === null || value === undefined ? '–' : `${value.toFixed(digits)} %`;
}

export function sipLoadText(result: SipLoadResult): string {
  const { settings: s, sipp, window: w, machine: m } = result;
  const c = sipp.counters;
  const lines = [
    `${result.label}: SIPp ${s.ratePerSecond} calls/s × ${s.callSeconds} s calls ` +
      `(${s.steadyCalls.toFixed(1)} open in the steady state) for ${s.durationSeconds} s, ` +
      `${s.probes} probe calls · ${m.cores} × ${m.cpuModel}, Node ${m.nodeVersion}`,
    c === null
      ? `SIPp: no statistics (exit code ${sipp.exitCode})`
      : `SIPp: ${c.created} calls placed, ${c.successful} successful, ${c.failed} failed` +
        (Object.keys(c.failures).length === 0
          ? ''
          : ` (${Object.entries(c.failures)
              .map(([cause, n]) => `${cause} × ${n}`)
              .join(', ')})`) +
        `, ${c.retransmissions} retransmissions, ${c.outOfCallMessages} out-of-call messages` +
        ` · exit code ${sipp.exitCode} · INVITE → 200 p50 ${ms(sipp.inviteToOkMs?.p50)}` +
        ` p99 ${ms(sipp.inviteToOkMs?.p99)} · SIPp CPU ${percent(sipp.cpuPercent)}`,
    `steady window ${w.seconds.toFixed(1)} s: ${(w.meanSippCalls ?? 0).toFixed(1)} SIPp calls + ` +
      `${w.meanProbeCalls.toFixed(1)} probes open on average · Parla CPU ` +
      `${percent(w.parla?.cpuPercent)} of a core (idle ${percent(w.parlaIdleCpuPercent, 1)}), ` +
      `peak RSS ${w.parla === null ? '–' : `${(w.parla.peakRssBytes / 2 ** 20).toFixed(0)} MiB`}` +
      ` · vendor simulators ${percent(w.vendors?.cpuPercent)}`,
    `calls per core: ${percent(w.cpuPerCallPercent, 2)} of a core per call ` +
      `(marginal ${percent(w.marginalCpuPerCallPercent, 2)}) → ` +
      `${w.callsPerCore === null ? '–' : w.callsPerCore.toFixed(0)} calls per core at 100 %`,
  ];
  if (w.probesOutlastedMs > 0) {
    lines.push(
      `warning: probes ran ${(w.probesOutlastedMs / 1000).toFixed(1)} s past the steady window ` +
        `(their last turns had less load): give a longer --duration`,
    );
  }
  const rows = [['Measure', 'n', 'p50', 'p95', 'p99', 'max']];
  const p = result.probes;
  if (p !== null) {
    rows.push(
      row('probe voice-to-voice', p.summary.voiceToVoiceMs),
      row(`probe added (v2v − ${s.expectedLatencyMs} ms)`, p.summary.addedMs),
      row('probe barge-in stop', p.summary.bargeInStopMs),
      row('probe turnLatency (Parla)', p.summary.stagesMs.turnLatency),
    );
  }
  const stored = result.sippCallsStored;
  if (stored !== null) {
    for (const [stage, d] of Object.entries(stored.stagesMs)) {
      rows.push(row(`SIPp calls ${stage} (Parla)`, d));
    }
    rows.push(row(`SIPp calls turnLatency − ${s.expectedLatencyMs} ms`, stored.ownAddedMs));
  }
  lines.push('', table(rows));
  if (p !== null) {
    lines.push(
      '',
      "Parla's outgoing RTP at the probes (arrival, RFC 3550 jitter and gaps between packets):",
      table([
        [
          'probe',
          'packets',
          'jitter end',
          'jitter max',
          'gap p50',
          'gap p99',
          'gap max',
          'gaps > 40 ms',
        ],
        ...p.rtp.map((r) => [
          String(r.call),
          String(r.packets),
          ms(r.jitterMs),
          ms(r.maxJitterMs),
          tenths(r.gapP50Ms),
          tenths(r.gapP99Ms),
          tenths(r.gapMaxMs),
          String(r.gapsOverTwoPackets),
        ]),
      ]),
      `probes: ${p.summary.calls} calls (${p.summary.failedCalls} failed), ${p.summary.turns} turns, ` +
        `${p.summary.lateChunks} late chunks, ${p.summary.holes} holes heard · ` +
        `harness pacing late p99 ${ms(p.pacing.lateP99Ms)}, max ${ms(p.pacing.lateMaxMs)}`,
    );
    if (Object.keys(p.summary.errors).length > 0) {
      lines.push(
        `probe errors: ${Object.entries(p.summary.errors)
          .map(([code, n]) => `${code} × ${n}`)
          .join(', ')}`,
      );
    }
  }
  if (stored !== null) {
    lines.push(
      `SIPp calls stored by Parla: ${stored.ended} ended of ${stored.calls} found, ` +
        `${stored.turns} timed turns · ended: ${Object.entries(stored.endedReasons)
          .map(([reason, n]) => `${reason} × ${n}`)
          .join(', ')}`,
    );
  }
  if (sipp.outputTail !== null) {
    lines.push('', 'SIPp output (end):', sipp.outputTail.trim().split('\n').slice(-25).join('\n'));
  }
  return lines.join('\n');
}
