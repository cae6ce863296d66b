import { performance } from 'node:perf_hooks';
import { Resampler } from '../../media/resample/resampler.js';
import type { CallerVad, CallerVadFactory, VadDecisionListener } from './caller-vad.js';
import { isSileroSampleRate, SileroModel, type SileroSampleRateHz } from './silero-model.js';
import { scoreSileroWindows, SileroBatchBuffers, SileroVad } from './silero-vad.js';

/**
 * One per worker thread: the thread's Silero model (one onnxruntime session) and the SileroVad of
 * every live call. The media clock calls `flush()` once per tick, after every call has pushed its
 * frame; flush scores all pending windows of all calls in one batched run (one run per rate and
 * round, see scoreSileroWindows). Runs never overlap: a flush while a run is in flight does
 * nothing (counted as `skippedFlushes`) and the windows wait for the next tick.
 *
 * If the model cannot be loaded, or a run fails, the pending windows are decided by the energy
 * gate alone (probability 1 where it opened, 0 elsewhere), so calls keep a working VAD.
 */

export interface SileroSchedulerOptions {
  /** The model or its loading; default the thread's `SileroModel.shared()`. */
  model?: SileroModel | Promise<SileroModel>;
  /** Rows per model run. Default 64. */
  maxBatch?: number;
}

export interface SileroSchedulerStats {
  calls: number;
  runs: number;
  /** Windows scored by the model. */
  windowsInferred: number;
  /** Windows the energy gate found silent (scored 0 without the model). */
  windowsGated: number;
  /** Windows decided by the energy gate alone because the model was unavailable or failed. */
  windowsByEnergy: number;
  /** Flushes that found a run still in flight. */
  skippedFlushes: number;
  failedRuns: number;
  /** Windows the live calls dropped because scoring fell behind (their queues were full). */
  windowsDropped: number;
  /** Most windows pending when a run started (windows arriving during a run join it). */
  maxWindowsPerRun: number;
  totalRunMs: number;
  maxRunMs: number;
  modelState: 'loading' | 'ready' | 'failed';
}

let threadScheduler: SileroScheduler | undefined;

export class SileroScheduler {
  #model: SileroModel | null = null;
  #modelState: SileroSchedulerStats['modelState'] = 'loading';
  readonly #maxBatch: number;
  readonly #buffers = new SileroBatchBuffers();
  /** Replaced (never mutated) on add/remove, so a run in flight keeps a stable list. */
  #vads: readonly SileroVad[] = [];
  #run: Promise<void> | null = null;
  #decidingByEnergy = false;
  #released = false;
  #runStartedMs = 0;
  #runWindows = 0;
  readonly #stats = {
    runs: 0,
    windowsInferred: 0,
    windowsGated: 0,
    windowsByEnergy: 0,
    skippedFlushes: 0,
    failedRuns: 0,
    maxWindowsPerRun: 0,
    totalRunMs: 0,
    maxRunMs: 0,
  };

  /** `flush` as one stable function, for a media clock's per-tick hooks (added once per thread). */
  readonly tickHook = (): void => this.flush();

  constructor(options: SileroSchedulerOptions = {}) {
    this.#maxBatch = options.maxBatch ?? 64;
    const model = options.model ?? SileroModel.shared();
    if (model instanceof SileroModel) {
      this.#model = model;
      this.#modelState = 'ready';
    } else {
      model.then(
        (loaded) => {
          if (this.#released) {
            void loaded.release();
            return;
          }
          this.#model = loaded;
          this.#modelState = 'ready';
        },
        () => {
          this.#modelState = 'failed';
        },
      );
    }
  }

  /** The scheduler of this worker thread (created on first use; starts loading the model). */
  static forThread(): SileroScheduler {
    threadScheduler ??= new SileroScheduler();
    return threadScheduler;
  }

  get size(): number {
    return this.#vads.length;
  }

  get running(): boolean {
    return this.#run !== null;
  }

  add(vad: SileroVad): void {
    if (!this.#vads.includes(vad)) {
      this.#vads = [...this.#vads, vad];
    }
  }

  remove(vad: SileroVad): void {
    if (this.#vads.includes(vad)) {
      this.#vads = this.#vads.filter((other) => other !== vad);
    }
  }

  stats(): SileroSchedulerStats {
    let windowsDropped = 0;
    for (const vad of this.#vads) {
      windowsDropped += vad.droppedWindows;
    }
    return {
      calls: this.#vads.length,
      modelState: this.#modelState,
      windowsDropped,
      ...this.#stats,
    };
  }

  /**
   * Before the thread exits: waits for the run in flight, then frees the model's native session
   * (exiting with a live session has aborted the process). Calls still running are decided by
   * the energy gate from then on.
   */
  async release(): Promise<void> {
    const model = this.#model;
    this.#model = null;
    this.#modelState = 'failed';
    await this.idle();
    this.#released = true;
    await model?.release();
    await SileroModel.releaseShared();
  }

  /** `release` as one stable function, for a thread's shutdown hooks. */
  readonly releaseHook = (): Promise<void> => this.release();

  /** Resolves when no run is in flight. */
  async idle(): Promise<void> {
    while (this.#run !== null) {
      await this.#run;
    }
  }

  /** Scores every pending window of every call in one batched run (see the class comment). */
  flush(): void {
    if (this.#run !== null) {
      this.#stats.skippedFlushes++;
      return;
    }
    const vads = this.#vads;
    let windows = 0;
    for (const vad of vads) {
      windows += vad.pendingWindows;
    }
    if (windows === 0) {
      return;
    }
    const model = this.#model;
    if (model === null) {
      if (this.#modelState === 'failed') {
        this.#decideByEnergy(vads);
      }
      return;
    }
    this.#runWindows = windows;
    this.#runStartedMs = performance.now();
    this.#run = scoreSileroWindows(model, vads, this.#buffers, this.#maxBatch).then(
      () => this.#finishRun(false),
      () => this.#finishRun(true),
    );
  }

  #finishRun(failed: boolean): void {
    const elapsedMs = performance.now() - this.#runStartedMs;
    const stats = this.#stats;
    stats.runs++;
    stats.totalRunMs += elapsedMs;
    stats.maxRunMs = Math.max(stats.maxRunMs, elapsedMs);
    stats.maxWindowsPerRun = Math.max(stats.maxWindowsPerRun, this.#runWindows);
    this.#run = null;
    if (failed) {
      stats.failedRuns++;
      this.#decideByEnergy(this.#vads);
    }
  }

  /** Counts one decided window (called by the calls' VADs). */
  countWindow(inferred: boolean): void {
    if (!inferred) {
      this.#stats.windowsGated++;
    } else if (this.#decidingByEnergy) {
      this.#stats.windowsByEnergy++;
    } else {
      this.#stats.windowsInferred++;
    }
  }

  #decideByEnergy(vads: readonly SileroVad[]): void {
    this.#decidingByEnergy = true;
    try {
      for (const vad of vads) {
        vad.resolveGated();
        while (vad.nextNeedsInference) {
          vad.acceptInference(1);
          vad.resolveGated();
        }
      }
    } finally {
      this.#decidingByEnergy = false;
    }
  }
}

/** Windows a call may have waiting: about half a second, to ride out the model's first load. */
const MAX_PENDING_WINDOWS = 16;

/**
 * A CallerVadFactory running Silero through `scheduler`: 8 and 16 kHz audio goes to the model as
 * is; any other rate (24, 44.1, 48 kHz, …) is resampled to 16 kHz first. Decisions arrive when
 * the scheduler's run completes (windows the energy gate finds silent: as soon as they are
 * complete), in stream order, one per 32 ms window. Window times are those of
 * the frames pushed, less the resampler's delay. `onListenerError` hears of a decision listener
 * that threw (the decision is then lost; other calls are unaffected).
 */
export function createSileroCallerVad(
  scheduler: SileroScheduler,
  onListenerError: (error: unknown) => void = () => undefined,
): CallerVadFactory {
  return (sampleRateHz: number, onDecision: VadDecisionListener): CallerVad =>
    new SileroCallerVad(scheduler, sampleRateHz, onDecision, onListenerError);
}

class SileroCallerVad implements CallerVad {
  readonly #scheduler: SileroScheduler;
  readonly #vad: SileroVad;
  readonly #resampler: Resampler | null;
  #resampled = new Int16Array(0);
  /** Views of #resampled by length (a rate pair gives one or two lengths per frame size). */
  readonly #views = new Map<number, Int16Array>();
  readonly #onDecision: VadDecisionListener;
  readonly #onListenerError: (error: unknown) => void;
  #closed = false;

  constructor(
    scheduler: SileroScheduler,
    sampleRateHz: number,
    onDecision: VadDecisionListener,
    onListenerError: (error: unknown) => void,
  ) {
    const vadRateHz: SileroSampleRateHz = isSileroSampleRate(sampleRateHz) ? sampleRateHz : 16000;
    this.#resampler =
      vadRateHz === sampleRateHz
        ? null
        : new Resampler({ inputRateHz: sampleRateHz, outputRateHz: vadRateHz });
    this.#scheduler = scheduler;
    this.#onDecision = onDecision;
    this.#onListenerError = onListenerError;
    this.#vad = new SileroVad({
      sampleRateHz: vadRateHz,
      maxPendingWindows: MAX_PENDING_WINDOWS,
      onWindow: (probability, startMs, endMs, inferred) => {
        scheduler.countWindow(inferred);
        if (this.#closed) {
          return;
        }
        try {
          onDecision(probability, startMs, endMs);
        } catch (error) {
          onListenerError(error);
        }
      },
    });
    scheduler.add(this.#vad);
  }

  push(samples: Int16Array, startMs: number): void {
    if (this.#closed) {
      return;
    }
    const resampler = this.#resampler;
    if (resampler === null) {
      this.#vad.pushFrame(samples, startMs);
      this.#resolveGated();
      return;
    }
    const room = resampler.maxOutputLength(samples.length);
    if (this.#resampled.length < room) {
      this.#resampled = new Int16Array(room);
      this.#views.clear();
    }
    const length = resampler.process(samples, this.#resampled);
    if (length === 0) {
      return;
    }
    let view = this.#views.get(length);
    if (view === undefined) {
      view = this.#resampled.subarray(0, length);
      this.#views.set(length, view);
    }
    this.#vad.pushFrame(view, startMs - resampler.groupDelayMs);
    this.#resolveGated();
  }

  /**
   * Windows the energy gate found silent need no model: they are decided now, in stream order
   * (never ahead of a window still waiting for the model), not at the next batched run. So is the
   * silent part of the window being filled (a 0 for [window start, end of this frame)), so that
   * the speech-stop hold expires at the frame it ends in rather than at the end of a 32 ms window.
   * The whole window is reported again when complete; the state machine gives the same result.
   */
  #resolveGated(): void {
    const vad = this.#vad;
    if (vad.pendingWindows > 0) {
      vad.resolveGated();
    }
    if (vad.pendingWindows > 0) {
      return;
    }
    const endMs = vad.silentPartialEndMs;
    if (endMs >= 0) {
      try {
        this.#onDecision(0, vad.partialStartMs, endMs);
      } catch (error) {
        this.#onListenerError(error);
      }
    }
  }

  close(): void {
    if (!this.#closed) {
      this.#closed = true;
      this.#scheduler.remove(this.#vad);
    }
  }
}
