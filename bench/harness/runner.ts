import type { TransportFactory } from './caller-transport.js';
import type { Clock, TimerHandle } from './clock.js';
import { measureTurns, type MeasureOptions, type TurnMeasures } from './measure-turns.js';
import { PacingTimer } from './pacing-timer.js';
import type { LoadedScript } from './script.js';
import {
  SimulatedCaller,
  type CallOutcome,
  type SimulatedCallerOptions,
  type TrackerSettings,
} from './simulated-caller.js';
import { distribution, quantile } from './stats.js';

export interface RunOptions {
  clock: Clock;
  transport: TransportFactory;
  /** Call i plays scripts[i % scripts.length]. */
  scripts: readonly LoadedScript[];
  calls: number;
  /** Caller turns per call (the script repeats); default: the script's own turns. */
  turnsPerCall?: number;
  /** Call i starts i·staggerMs after the first. Default 100 ms. */
  staggerMs?: number;
  frameMs?: number;
  tracker?: TrackerSettings;
  measure?: MeasureOptions;
  caller?: Pick<
    SimulatedCallerOptions,
    'replyTimeoutMs' | 'maxReplyMs' | 'tailMs' | 'maxCallMs' | 'connectTimeoutMs'
  >;
  onProgress?: (progress: Progress) => void;
  progressIntervalMs?: number;
}

export interface Progress {
  callsTotal: number;
  callsRunning: number;
  callsDone: number;
  callsFailed: number;
  turnsDone: number;
  /** Live estimates from replies so far (the result's figures are measured after each call). */
  voiceToVoiceP50Ms: number | null;
  voiceToVoiceP95Ms: number | null;
  elapsedMs: number;
}

export interface CallResult {
  index: number;
  script: string;
  callId: string | null;
  error: CallOutcome['error'];
  durationMs: number;
  turns: TurnMeasures[];
  skippedTurns: number;
  missingReplies: number;
  lateChunks: number;
  holes: number;
  messageCounts: Record<string, number>;
  /**
   * The per-turn breakdown the server kept for the whole call (every reply it timed, the first
   * message and answers to backchannels included), as fetched after the call.
   */
  serverTurnStages?: Record<string, number>[];
}

export interface RunResult {
  calls: CallResult[];
  /** How late the shared pacing timer fired: the harness's own health. */
  pacing: { lateP99Ms: number | null; lateMaxMs: number };
  durationMs: number;
}

/** Runs `calls` simulated callers concurrently on one pacing timer and measures every turn. */
export async function runCalls(options: RunOptions): Promise<RunResult> {
  const { clock } = options;
  if (!Number.isInteger(options.calls) || options.calls < 1 || options.calls > 10_000) {
    throw new RangeError(`calls must be an integer from 1 to 10000, got ${options.calls}`);
  }
  if (options.scripts.length === 0) {
    throw new RangeError('at least one script is needed');
  }
  const pacing = new PacingTimer(clock, options.frameMs ?? 20);
  const startedMs = clock.nowMs();
  const liveVoiceToVoice: number[] = [];
  const progress: Progress = {
    callsTotal: options.calls,
    callsRunning: 0,
    callsDone: 0,
    callsFailed: 0,
    turnsDone: 0,
    voiceToVoiceP50Ms: null,
    voiceToVoiceP95Ms: null,
    elapsedMs: 0,
  };
  const report = (): void => {
    if (options.onProgress === undefined) {
      return;
    }
    const sorted = [...liveVoiceToVoice].sort((a, b) => a - b);
    progress.voiceToVoiceP50Ms = sorted.length > 0 ? quantile(sorted, 0.5) : null;
    progress.voiceToVoiceP95Ms = sorted.length > 0 ? quantile(sorted, 0.95) : null;
    progress.elapsedMs = clock.nowMs() - startedMs;
    options.onProgress({ ...progress });
  };
  let progressTimer: TimerHandle | null = null;
  const intervalMs = options.progressIntervalMs ?? 500;
  const tick = (): void => {
    report();
    progressTimer = clock.setTimer(tick, intervalMs);
  };
  if (options.onProgress !== undefined) {
    progressTimer = clock.setTimer(tick, intervalMs);
  }
  const staggerMs = options.staggerMs ?? 100;
  const runs: Promise<CallResult>[] = [];
  for (let index = 0; index < options.calls; index++) {
    runs.push(
      delay(clock, index * staggerMs).then(async () => {
        const script = options.scripts[index % options.scripts.length]!;
        const caller = new SimulatedCaller({
          ...options.caller,
          index,
          clock,
          pacing,
          transport: options.transport(index),
          script,
          turnCount: options.turnsPerCall ?? script.turns.length,
          ...(options.tracker === undefined ? {} : { tracker: options.tracker }),
          onReply: (ms) => {
            if (liveVoiceToVoice.length < 100_000) {
              liveVoiceToVoice.push(ms);
            }
          },
          onTurnSent: () => {
            progress.turnsDone++;
          },
        });
        progress.callsRunning++;
        const outcome = await caller.run();
        progress.callsRunning--;
        progress.callsDone++;
        if (outcome.error !== null) {
          progress.callsFailed++;
        }
        return toCallResult(outcome, options.measure ?? {});
      }),
    );
  }
  const calls = await Promise.all(runs);
  if (progressTimer !== null) {
    clock.clearTimer(progressTimer);
  }
  report();
  const lateness = pacing.lateness();
  return {
    calls,
    pacing: {
      lateP99Ms: distribution(lateness.samplesMs)?.p99 ?? null,
      lateMaxMs: lateness.maxMs,
    },
    durationMs: clock.nowMs() - startedMs,
  };
}

function toCallResult(outcome: CallOutcome, measure: MeasureOptions): CallResult {
  // The server's `clear` events tell a stop from a natural end where the transport carries them.
  const carriesMessages = Object.keys(outcome.messageCounts).length > 0;
  const measured = measureTurns(outcome.callerSegments, outcome.assistant, outcome.marks, {
    ...measure,
    ...(carriesMessages && measure.clearsAtMs === undefined
      ? { clearsAtMs: outcome.clearsAtMs }
      : {}),
  });
  const turns = measured.turns;
  for (const stage of outcome.stages) {
    const turn = lastStartedBy(turns, outcome, stage.atMs);
    if (turn !== undefined && turn.stagesMs === null) {
      turn.stagesMs = stage.stagesMs;
    }
  }
  // Timings fetched after the call are per answered turn, in order: used when no live ones came
  // and only when the counts match (otherwise they could be put on the wrong turns).
  const answered = turns.filter((t) => t.kind !== 'backchannel' && t.voiceToVoiceMs !== null);
  if (
    outcome.stages.length === 0 &&
    outcome.turnStages.length > 0 &&
    outcome.turnStages.length === answered.length
  ) {
    answered.forEach((turn, i) => {
      turn.stagesMs = outcome.turnStages[i]!;
    });
  }
  for (const turn of turns) {
    const onsetMs = turn.callerStartMs;
    if (turn.kind === 'interruption' && onsetMs !== null && turn.duringAssistantSpeech) {
      const clearAtMs = outcome.clearsAtMs.find((atMs) => atMs >= onsetMs);
      turn.clearMs = clearAtMs === undefined ? null : clearAtMs - onsetMs;
    }
  }
  return {
    index: outcome.index,
    script: outcome.script,
    callId: outcome.callId,
    error: outcome.error,
    durationMs: outcome.endedAtMs - outcome.startedAtMs,
    turns,
    skippedTurns: outcome.skippedTurns,
    missingReplies: outcome.missingReplies,
    lateChunks: measured.lateChunks,
    holes: measured.holes,
    messageCounts: outcome.messageCounts,
    serverTurnStages: outcome.turnStages,
  };
}

/** The last turn that had started sending by `atMs`. */
function lastStartedBy(
  turns: TurnMeasures[],
  outcome: CallOutcome,
  atMs: number,
): TurnMeasures | undefined {
  let found: TurnMeasures | undefined;
  for (const turn of turns) {
    const mark = outcome.marks.find((m) => m.index === turn.index);
    if (mark !== undefined && mark.sentStartMs <= atMs) {
      found = turn;
    }
  }
  return found;
}

function delay(clock: Clock, ms: number): Promise<void> {
  if (ms <= 0) {
    return Promise.resolve();
  }
  return new Promise((resolve) => clock.setTimer(resolve, ms));
}
