import { readFile } from 'node:fs/promises';
import type { CapacityResult } from './capacity.js';
import { HarnessError } from './caller-transport.js';
import type { MachineInfo, ProcessUsage } from './machine.js';
import type { TurnMeasures } from './measure-turns.js';
import type { CallResult, RunResult } from './runner.js';
import { distribution, type Distribution } from './stats.js';

/** The JSON result file: every turn's measures, the summary, and what it was measured on. */
export const RESULT_FORMAT = 'parla-bench-latency/1';

export interface BenchResult {
  format: typeof RESULT_FORMAT;
  label: string;
  machine: MachineInfo;
  target: {
    transport: 'websocket' | 'sip' | 'fake';
    url: string | null;
    assistantId: string | null;
    /** `--self` runs: the simulated vendors' latencies, the VAD and Parla's worker threads. */
    self?: Record<string, unknown>;
  };
  settings: {
    calls: number;
    turnsPerCall: number | null;
    scripts: string[];
    /** Simulated vendor latency plus configured waits, subtracted for "added" latency. */
    expectedLatencyMs: number | null;
    /** The replies' natural length backchannels were judged against (absent in older results). */
    expectedReplyMs?: number | null;
  };
  summary: Summary;
  pacing: RunResult['pacing'];
  /** This harness process (it shares the machine with the server when both run here). */
  harnessCpuPercent: number;
  /** The server under test, when its pid was given (--server-pid). */
  server: ProcessUsage | null;
  durationMs: number;
  calls: CallResult[];
  capacity: CapacityResult | null;
}

export interface Rate {
  count: number;
  of: number;
}

export interface Summary {
  calls: number;
  failedCalls: number;
  turns: number;
  voiceToVoiceMs: Distribution | null;
  addedMs: Distribution | null;
  bargeInStopMs: Distribution | null;
  clearMs: Distribution | null;
  /** Backchannels during assistant speech that stopped it. */
  falseInterruptions: Rate;
  /** Speech and interruption turns the assistant talked into. */
  cutOffs: Rate;
  /** Interruptions that landed while the assistant was speaking (those barge-in is timed on). */
  bargeIns: Rate;
  missingReplies: number;
  skippedTurns: number;
  lateChunks: number;
  holes: number;
  holeMs: number;
  silentGaps: number;
  /** Per-stage timings the server reported, by stage. */
  stagesMs: Record<string, Distribution>;
  errors: Record<string, number>;
}

export function summarize(calls: readonly CallResult[]): Summary {
  const turns: TurnMeasures[] = calls.flatMap((call) => call.turns);
  const pick = (f: (t: TurnMeasures) => number | null): Distribution | null =>
    distribution(turns.map(f));
  const backchannels = turns.filter(
    (t) => t.kind === 'backchannel' && t.falseInterruption !== null,
  );
  const answered = turns.filter((t) => t.kind !== 'backchannel' && t.callerEndMs !== null);
  const interruptions = turns.filter((t) => t.kind === 'interruption');
  const stageValues = new Map<string, number[]>();
  // Per call: the stages put on its turns, or when none could be (counts differ), every turn the
  // server timed after the call.
  for (const call of calls) {
    const onTurns = call.turns.flatMap((t) => (t.stagesMs === null ? [] : [t.stagesMs]));
    for (const stages of onTurns.length > 0 ? onTurns : (call.serverTurnStages ?? [])) {
      for (const [stage, ms] of Object.entries(stages)) {
        const list = stageValues.get(stage) ?? [];
        list.push(ms);
        stageValues.set(stage, list);
      }
    }
  }
  const stagesMs: Record<string, Distribution> = {};
  for (const [stage, values] of stageValues) {
    const d = distribution(values);
    if (d !== null) {
      stagesMs[stage] = d;
    }
  }
  const errors: Record<string, number> = {};
  for (const call of calls) {
    if (call.error !== null) {
      errors[call.error.code] = (errors[call.error.code] ?? 0) + 1;
    }
  }
  const sum = (f: (t: TurnMeasures) => number): number => turns.reduce((s, t) => s + f(t), 0);
  return {
    calls: calls.length,
    failedCalls: calls.filter((c) => c.error !== null).length,
    turns: turns.length,
    voiceToVoiceMs: pick((t) => t.voiceToVoiceMs),
    addedMs: pick((t) => t.addedMs),
    bargeInStopMs: pick((t) => t.bargeInStopMs),
    clearMs: pick((t) => t.clearMs),
    falseInterruptions: {
      count: backchannels.filter((t) => t.falseInterruption === true).length,
      of: backchannels.length,
    },
    cutOffs: { count: answered.filter((t) => t.cutOff).length, of: answered.length },
    bargeIns: {
      count: interruptions.filter((t) => t.duringAssistantSpeech).length,
      of: interruptions.length,
    },
    missingReplies: calls.reduce((s, c) => s + c.missingReplies, 0),
    skippedTurns: calls.reduce((s, c) => s + c.skippedTurns, 0),
    lateChunks: sum((t) => t.lateChunks),
    holes: sum((t) => t.holes),
    holeMs: sum((t) => t.holeMs),
    silentGaps: sum((t) => t.silentGaps),
    stagesMs,
    errors,
  };
}

/** Reads and checks a result file written by this harness. */
export async function readResult(path: string): Promise<BenchResult> {
  let value: unknown;
  try {
    const text = await readFile(path, 'utf8');
    value = JSON.parse(text);
  } catch (error) {
    throw new HarnessError('ERR_BENCH_RESULT', `cannot read ${path}: ${String(error)}`, {
      cause: error,
    });
  }
  const result = value as Partial<BenchResult> | null;
  if (
    typeof result !== 'object' ||
    result === null ||
    result.format !== RESULT_FORMAT ||
    typeof result.summary !== 'object' ||
    typeof result.machine !== 'object' ||
    !Array.isArray(result.calls)
  ) {
    throw new HarnessError('ERR_BENCH_RESULT', `${path} is not a ${RESULT_FORMAT} result file`);
  }
  return result as BenchResult;
}
