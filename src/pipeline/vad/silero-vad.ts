import { EnergyVad, type EnergyVadOptions } from './energy-vad.js';
import {
  isSileroSampleRate,
  SILERO_STATE_FLOATS,
  sileroContextSamples,
  sileroInputSamples,
  type SileroModel,
  type SileroSampleRateHz,
  sileroWindowSamples,
} from './silero-model.js';

/**
 * Per-call Silero VAD: the recurrent state, the 64-sample context (32 at 8 kHz) and an accumulator
 * that turns 10/20 ms PCM16 frames into 32 ms windows. Completed windows wait in a small queue
 * until `scoreSileroWindows` scores the pending windows of many calls in one batched run; each
 * result reaches `onWindow(probability, startMs, endMs, inferred)` in stream order.
 *
 * Energy gate: an `EnergyVad` sees every frame. A window in which no frame opened the gate is not
 * inferred; it scores 0 (`inferred` false). State policy while gated: the context still follows
 * the audio (so the next inferred window gets its real predecessor), the recurrent state is kept
 * for up to `stateResetAfterMs` of continuous gated audio (a short pause does not cost Silero its
 * memory of the talker), and after that it is zeroed, as at the start of a stream, because a stale
 * state from speech long ago describes nothing the model would have seen.
 */

export type SileroWindowListener = (
  probability: number,
  startMs: number,
  endMs: number,
  inferred: boolean,
) => void;

export interface SileroVadOptions {
  sampleRateHz: SileroSampleRateHz;
  onWindow: SileroWindowListener;
  /** Energy-gate settings, or false to infer every window. Default: `EnergyVad` defaults. */
  gate?: Omit<EnergyVadOptions, 'sampleRateHz'> | false;
  /** Gated audio after which the recurrent state is zeroed. Default 1000 ms. */
  stateResetAfterMs?: number;
  /** Windows that may wait for scoring; newer ones are dropped beyond. Default 4. */
  maxPendingWindows?: number;
}

export class SileroVad {
  readonly sampleRateHz: SileroSampleRateHz;
  readonly windowSamples: number;
  readonly windowMs: number;
  /** Recurrent state [2][128] of this call. */
  readonly state = new Float32Array(SILERO_STATE_FLOATS);
  /** Windows dropped because scoring fell behind. */
  droppedWindows = 0;
  private readonly onWindow: SileroWindowListener;
  private readonly gate: EnergyVad | undefined;
  private readonly stateResetAfterMs: number;
  private readonly contextSamples: number;
  private readonly inputSamples: number;
  /** Context followed by the window being filled. */
  private readonly current: Float32Array;
  private filled = 0;
  private currentStartMs = 0;
  private currentGateOpen = false;
  private readonly capacity: number;
  /** Queue of complete windows (context + window each). */
  private readonly pendingInputs: Float32Array;
  private readonly pendingStartMs: Float64Array;
  private readonly pendingGateOpen: Uint8Array;
  private head = 0;
  private count = 0;
  private gatedMs = 0;

  constructor(options: SileroVadOptions) {
    if (!isSileroSampleRate(options.sampleRateHz)) {
      throw new RangeError(`Silero runs at 8000 or 16000 Hz, got ${String(options.sampleRateHz)}`);
    }
    this.sampleRateHz = options.sampleRateHz;
    this.windowSamples = sileroWindowSamples(this.sampleRateHz);
    this.contextSamples = sileroContextSamples(this.sampleRateHz);
    this.inputSamples = sileroInputSamples(this.sampleRateHz);
    this.windowMs = (this.windowSamples * 1000) / this.sampleRateHz;
    this.onWindow = options.onWindow;
    this.gate =
      options.gate === false
        ? undefined
        : new EnergyVad({ ...options.gate, sampleRateHz: this.sampleRateHz });
    this.stateResetAfterMs = options.stateResetAfterMs ?? 1000;
    this.capacity = Math.max(1, options.maxPendingWindows ?? 4);
    this.current = new Float32Array(this.inputSamples);
    this.pendingInputs = new Float32Array(this.capacity * this.inputSamples);
    this.pendingStartMs = new Float64Array(this.capacity);
    this.pendingGateOpen = new Uint8Array(this.capacity);
  }

  /** Windows waiting to be scored. */
  get pendingWindows(): number {
    return this.count;
  }

  /** Whether the oldest pending window needs inference (false: gated, scored 0 without it). */
  get nextNeedsInference(): boolean {
    return this.count > 0 && this.pendingGateOpen[this.head] === 1;
  }

  /**
   * Appends one frame (at the VAD's rate) starting at `ptsMs`; returns the number of windows now
   * pending. The samples are copied: the caller may reuse its buffer.
   */
  pushFrame(samples: Int16Array, ptsMs: number): number {
    const gateOpen = this.gate === undefined ? true : this.gate.process(samples);
    const msPerSample = 1000 / this.sampleRateHz;
    const base = this.contextSamples;
    let i = 0;
    while (i < samples.length) {
      if (this.filled === 0) {
        this.currentStartMs = ptsMs + i * msPerSample;
        this.currentGateOpen = false;
      }
      this.currentGateOpen ||= gateOpen;
      const take = Math.min(this.windowSamples - this.filled, samples.length - i);
      const offset = base + this.filled;
      for (let k = 0; k < take; k++) {
        this.current[offset + k] = samples[i + k]! / 32768;
      }
      this.filled += take;
      i += take;
      if (this.filled === this.windowSamples) {
        this.completeWindow();
      }
    }
    return this.count;
  }

  /** Start of the window being filled. */
  get partialStartMs(): number {
    return this.currentStartMs;
  }

  /**
   * End of the audio so far in the window being filled when the energy gate found all of it
   * silent (it will score 0 unless a later frame opens the gate); -1 when it is empty, not
   * silent, or the gate is off.
   */
  get silentPartialEndMs(): number {
    if (this.gate === undefined || this.filled === 0 || this.currentGateOpen) {
      return -1;
    }
    return this.currentStartMs + (this.filled * 1000) / this.sampleRateHz;
  }

  /** Resolves every pending window that needs no inference, up to the first that does. */
  resolveGated(): void {
    while (this.count > 0 && this.pendingGateOpen[this.head] === 0) {
      const startMs = this.pendingStartMs[this.head]!;
      this.gatedMs += this.windowMs;
      if (this.gatedMs >= this.stateResetAfterMs) {
        this.state.fill(0);
      }
      this.shift();
      this.onWindow(0, startMs, startMs + this.windowMs, false);
    }
  }

  /** Copies the oldest pending window (context + window) into `target` at `offset`. */
  copyNextInput(target: Float32Array, offset: number): void {
    const start = this.head * this.inputSamples;
    target.set(this.pendingInputs.subarray(start, start + this.inputSamples), offset);
  }

  /** Completes the oldest pending window with its inferred probability. */
  acceptInference(probability: number): void {
    const startMs = this.pendingStartMs[this.head]!;
    this.gatedMs = 0;
    this.shift();
    this.onWindow(probability, startMs, startMs + this.windowMs, true);
  }

  /** Back to the start of a stream: zero state and context, nothing pending. */
  reset(): void {
    this.state.fill(0);
    this.current.fill(0);
    this.filled = 0;
    this.head = 0;
    this.count = 0;
    this.gatedMs = 0;
    this.gate?.reset();
  }

  private completeWindow(): void {
    // When scoring falls behind, the new window is dropped, never the oldest: that one may be in
    // a model run right now.
    if (this.count === this.capacity) {
      this.droppedWindows++;
    } else {
      const slot = (this.head + this.count) % this.capacity;
      this.pendingInputs.set(this.current, slot * this.inputSamples);
      this.pendingStartMs[slot] = this.currentStartMs;
      this.pendingGateOpen[slot] = this.currentGateOpen ? 1 : 0;
      this.count++;
    }
    // The last samples of this window become the context of the next.
    this.current.copyWithin(0, this.windowSamples, this.inputSamples);
    this.filled = 0;
  }

  private shift(): void {
    this.head = (this.head + 1) % this.capacity;
    this.count--;
  }
}

/** Reusable buffers for batched scoring; one per worker thread, used by one scoring at a time. */
export class SileroBatchBuffers {
  inputs = new Float32Array(0);
  states = new Float32Array(0);
  probabilities = new Float32Array(0);
  members: SileroVad[] = [];

  ensure(rowFloats: number, batch: number): void {
    if (this.inputs.length < rowFloats * batch) {
      this.inputs = new Float32Array(rowFloats * batch);
    }
    if (this.states.length < SILERO_STATE_FLOATS * batch) {
      this.states = new Float32Array(SILERO_STATE_FLOATS * batch);
      this.probabilities = new Float32Array(batch);
    }
  }
}

const HALF = SILERO_STATE_FLOATS / 2;
const RATES_HZ = [16000, 8000] as const;

/**
 * Scores every pending window of `vads` (any mix of 8 and 16 kHz calls), batching the windows of
 * all calls at one rate into one model run per round; calls with several pending windows take one
 * round each. Gated windows are resolved without inference. `maxBatch` caps the rows per run.
 */
export async function scoreSileroWindows(
  model: SileroModel,
  vads: readonly SileroVad[],
  buffers: SileroBatchBuffers = new SileroBatchBuffers(),
  maxBatch = 64,
): Promise<void> {
  for (;;) {
    let ran = false;
    for (const rate of RATES_HZ) {
      const members = buffers.members;
      members.length = 0;
      for (const vad of vads) {
        if (vad.sampleRateHz !== rate) {
          continue;
        }
        vad.resolveGated();
        if (vad.nextNeedsInference && members.length < maxBatch) {
          members.push(vad);
        }
      }
      const batch = members.length;
      if (batch === 0) {
        continue;
      }
      const rowFloats = sileroInputSamples(rate);
      buffers.ensure(rowFloats, batch);
      const { inputs, states, probabilities } = buffers;
      for (let b = 0; b < batch; b++) {
        const vad = members[b]!;
        vad.copyNextInput(inputs, b * rowFloats);
        states.set(vad.state.subarray(0, HALF), b * HALF);
        states.set(vad.state.subarray(HALF), (batch + b) * HALF);
      }
      await model.runBatch(rate, inputs, states, batch, probabilities);
      for (let b = 0; b < batch; b++) {
        const vad = members[b]!;
        vad.state.set(states.subarray(b * HALF, (b + 1) * HALF), 0);
        vad.state.set(states.subarray((batch + b) * HALF, (batch + b + 1) * HALF), HALF);
        vad.acceptInference(probabilities[b]!);
      }
      members.length = 0;
      ran = true;
    }
    if (!ran) {
      return;
    }
  }
}
