import type { AudioFrame } from '../../media/audio-frame.js';
import {
  Resampler,
  RESAMPLER_RATES_HZ,
  type ResamplerRateHz,
} from '../../media/resample/resampler.js';
import {
  loadRnnoiseModule,
  RNNOISE_DELAY_SAMPLES,
  RNNOISE_FRAME_SAMPLES,
  RNNOISE_RATE_HZ,
  type RnnoiseWasmModule,
} from './rnnoise-module.js';

/** The platform's `backgroundSpeechDenoisingPlan.smartDenoisingPlan`. */
export interface SmartDenoisingPlan {
  /** Default false: audio passes through untouched, with no delay, and no WASM is loaded. */
  enabled?: boolean;
}

export interface RnnoiseDenoiserOptions extends SmartDenoisingPlan {
  /** 8000, 16000, 24000, 44100 or 48000. */
  sampleRateHz: number;
}

/**
 * Streaming RNNoise (the platform's `smartDenoisingPlan`) over mono PCM16 frames of 10 or 20 ms
 * (docs/denoising.md has the method and measurements): each frame is resampled to 48 kHz, run
 * through RNNoise 480 samples (10 ms) at a time, and resampled back to the call rate.
 *
 * Every 10 ms of input makes exactly 480 samples at 48 kHz and back, so each process() call
 * writes exactly as many samples as it reads, whatever the mix of 10 and 20 ms frames: the
 * output is the denoised input of `latencyMs` earlier (both resampling filters, RNNoise's own
 * 10 ms, and a pad of a few samples at 48 kHz that makes the delay a whole number of samples at
 * 8, 16, 24 and 48 kHz where it can; at 8, 24 and 44.1 kHz a fraction of a sample is left, and
 * `latencySamples` is then fractional).
 *
 * Create with `await RnnoiseDenoiser.create(...)`: the WASM module is compiled once per thread
 * and shared; each instance holds one RNNoise state (one call), freed by close(), after which
 * process() throws. process() is synchronous and allocates nothing.
 */
export class RnnoiseDenoiser {
  readonly sampleRateHz: ResamplerRateHz;
  readonly enabled: boolean;
  /** Samples in 10 ms at the call rate. */
  readonly hopSize: number;
  /** Delay from input to output in samples at the call rate (possibly fractional) and in ms. */
  readonly latencySamples: number;
  readonly latencyMs: number;
  private readonly module: RnnoiseWasmModule | null;
  private state: number;
  /** Byte address of the 480-float frame buffer in the WASM heap. */
  private frameBuffer: number;
  private closed = false;
  private readonly up: Resampler | null;
  private readonly down: Resampler | null;
  /** Input at 48 kHz not yet given to RNNoise (fewer than 480 samples between calls). */
  private readonly pending: Int16Array;
  private pendingLength = 0;
  /** RNNoise output at 48 kHz; the first `padSamples` are the delay line carried between calls. */
  private readonly denoised: Int16Array;
  private readonly padSamples: number;
  private lastProbability = 0;
  private maxProbability = 0;

  private constructor(
    options: { sampleRateHz: ResamplerRateHz; enabled: boolean },
    module: RnnoiseWasmModule | null,
  ) {
    this.sampleRateHz = options.sampleRateHz;
    this.enabled = options.enabled;
    this.hopSize = this.sampleRateHz / 100;
    this.module = module;
    if (module === null) {
      this.state = 0;
      this.frameBuffer = 0;
      this.up = null;
      this.down = null;
      this.pending = new Int16Array(0);
      this.denoised = new Int16Array(0);
      this.padSamples = 0;
      this.latencySamples = 0;
      this.latencyMs = 0;
      return;
    }
    const rate = this.sampleRateHz;
    this.up = new Resampler({ inputRateHz: rate, outputRateHz: RNNOISE_RATE_HZ });
    this.down = new Resampler({ inputRateHz: RNNOISE_RATE_HZ, outputRateHz: rate });
    const delay48 =
      this.up.groupDelayOutputSamples + RNNOISE_DELAY_SAMPLES + this.down.groupDelayInputSamples;
    // Round the delay up to whole call-rate samples where the 48 kHz grid allows it.
    const ratio = RNNOISE_RATE_HZ / rate;
    this.padSamples = Number.isInteger(ratio)
      ? Math.floor(Math.ceil(delay48 / ratio - 1e-9) * ratio - delay48 + 1e-9)
      : 0;
    const total48 = delay48 + this.padSamples;
    this.latencyMs = (total48 * 1000) / RNNOISE_RATE_HZ;
    this.latencySamples = (total48 * rate) / RNNOISE_RATE_HZ;
    const maxUp = this.up.maxOutputLength(2 * this.hopSize);
    this.pending = new Int16Array(RNNOISE_FRAME_SAMPLES + maxUp);
    this.denoised = new Int16Array(this.padSamples + RNNOISE_FRAME_SAMPLES + maxUp);
    this.state = module._rnnoise_create(0);
    this.frameBuffer = module._malloc(RNNOISE_FRAME_SAMPLES * 4);
    if (this.state === 0 || this.frameBuffer === 0) {
      this.free();
      throw new Error('RNNoise: out of WASM memory');
    }
  }

  /**
   * Loads the shared WASM module (once per thread) and creates one RNNoise state. Throws a
   * RangeError for an unsupported rate or a non-boolean `enabled`.
   */
  static async create(options: RnnoiseDenoiserOptions): Promise<RnnoiseDenoiser> {
    const { sampleRateHz } = options;
    if (!(RESAMPLER_RATES_HZ as readonly number[]).includes(sampleRateHz)) {
      throw new RangeError(
        `sampleRateHz must be one of ${RESAMPLER_RATES_HZ.join(', ')}, got ${String(sampleRateHz)}`,
      );
    }
    const enabled = options.enabled ?? false;
    if (typeof enabled !== 'boolean') {
      throw new RangeError(
        `smartDenoisingPlan.enabled must be true or false, got ${String(enabled)}`,
      );
    }
    const rate = sampleRateHz as ResamplerRateHz;
    const module = enabled ? await loadRnnoiseModule() : null;
    return new RnnoiseDenoiser({ sampleRateHz: rate, enabled }, module);
  }

  /**
   * RNNoise's voice probability (0 … 1) for its most recent 10 ms frame, which ends
   * `up.groupDelayMs` (the upsampler's delay) before the end of the latest input frame. 0 before
   * any frame and when disabled.
   */
  get voiceProbability(): number {
    return this.lastProbability;
  }

  /** The highest voice probability of the RNNoise frames run by the last process() call. */
  get maxVoiceProbability(): number {
    return this.maxProbability;
  }

  /** Whether close() has been called. */
  get isClosed(): boolean {
    return this.closed;
  }

  /**
   * Denoises one frame: `input` holds 10 or 20 ms of samples, `output` receives as many (it may
   * be `input` itself). Throws a RangeError for any other length, an Error after close().
   */
  process(input: Int16Array, output: Int16Array): void {
    if (this.closed) {
      throw new Error('RnnoiseDenoiser is closed');
    }
    const hop = this.hopSize;
    const length = input.length;
    if (length !== hop && length !== 2 * hop) {
      throw new RangeError(
        `frames must be 10 or 20 ms (${hop} or ${2 * hop} samples at ${this.sampleRateHz} Hz), ` +
          `got ${length} samples`,
      );
    }
    if (output.length !== length) {
      throw new RangeError(`output holds ${output.length} samples, input ${length}`);
    }
    const module = this.module;
    const up = this.up;
    const down = this.down;
    if (module === null || up === null || down === null) {
      if (output !== input) {
        output.set(input);
      }
      return;
    }
    const frame = RNNOISE_FRAME_SAMPLES;
    const pending = this.pending;
    const denoised = this.denoised;
    const pad = this.padSamples;
    // up.process() reads all of `input` before anything is written to `output`.
    this.pendingLength += up.process(input, pending, 0, length, this.pendingLength);
    let produced = 0;
    let maxProbability = 0;
    let offset = 0;
    const floatBase = this.frameBuffer >>> 2;
    for (; offset + frame <= this.pendingLength; offset += frame) {
      // Read HEAPF32 afresh: another state's _malloc may have grown the heap.
      const heap = module.HEAPF32;
      for (let i = 0; i < frame; i++) {
        heap[floatBase + i] = pending[offset + i]!;
      }
      const probability = module._rnnoise_process_frame(
        this.state,
        this.frameBuffer,
        this.frameBuffer,
      );
      const target = pad + produced;
      for (let i = 0; i < frame; i++) {
        const v = heap[floatBase + i]!;
        denoised[target + i] = v >= 32767 ? 32767 : v <= -32768 ? -32768 : Math.round(v);
      }
      produced += frame;
      this.lastProbability = probability;
      if (probability > maxProbability) {
        maxProbability = probability;
      }
    }
    this.maxProbability = maxProbability;
    pending.copyWithin(0, offset, this.pendingLength);
    this.pendingLength -= offset;
    // `pad` samples carried from the last call, then this call's output; keep the last `pad`.
    const written = down.process(denoised, output, 0, produced);
    denoised.copyWithin(0, produced, produced + pad);
    if (written !== length) {
      throw new Error(`RnnoiseDenoiser: ${written} samples out for ${length} in (internal error)`);
    }
  }

  /**
   * process() for frames: writes `output.samples` (which may be `input.samples`) and sets
   * `output.ptsMs` to the presentation time of the audio it now holds, input.ptsMs − latencyMs.
   */
  processFrame(input: AudioFrame, output: AudioFrame): void {
    if (input.sampleRateHz !== this.sampleRateHz || output.sampleRateHz !== this.sampleRateHz) {
      throw new RangeError(
        `frame rate ${input.sampleRateHz}/${output.sampleRateHz} Hz does not match the ` +
          `denoiser's ${this.sampleRateHz} Hz`,
      );
    }
    this.process(input.samples, output.samples);
    output.ptsMs = input.ptsMs - this.latencyMs;
  }

  /** Forgets the stream: resampler history, buffered samples and RNNoise's recurrent state. */
  reset(): void {
    if (this.closed) {
      throw new Error('RnnoiseDenoiser is closed');
    }
    if (this.module !== null) {
      this.up?.reset();
      this.down?.reset();
      this.pendingLength = 0;
      this.denoised.fill(0);
      this.module._rnnoise_init(this.state, 0);
    }
    this.lastProbability = 0;
    this.maxProbability = 0;
  }

  /** Frees the RNNoise state and its buffer; later process() calls throw. Idempotent. */
  close(): void {
    if (!this.closed) {
      this.closed = true;
      this.free();
    }
  }

  private free(): void {
    const module = this.module;
    if (module !== null) {
      if (this.state !== 0) {
        module._rnnoise_destroy(this.state);
        this.state = 0;
      }
      if (this.frameBuffer !== 0) {
        module._free(this.frameBuffer);
        this.frameBuffer = 0;
      }
    }
  }
}
