import type { AudioFrame } from '../../media/audio-frame.js';
import {
  resolveDenoiserOptions,
  type FourierDenoiserOptions,
  type ResolvedDenoiserOptions,
} from './denoiser-options.js';
import { SpectralGate } from './spectral-gate.js';
import { OverlapAddStft } from './stft.js';

export {
  DEFAULT_DENOISER_TUNING,
  DEFAULT_DENOISING_PLAN,
  type FourierDenoiserOptions,
  type FourierDenoiserTuning,
  type FourierDenoisingPlan,
} from './denoiser-options.js';

/**
 * Streaming spectral gate implementing the platform's `fourierDenoisingPlan` over mono PCM16
 * frames of 10 or 20 ms (docs/denoising.md has the method, the reading of each plan field, and
 * measurements).
 *
 * The STFT hop is 10 ms, so every frame is one or two whole hops: the output is the input of
 * exactly `latencyMs` (10 ms) earlier, gated, whatever the frame sizes; the first 10 ms out are
 * silence. With `enabled: false` frames pass through untouched and `latencyMs` is 0.
 *
 * process() is synchronous and allocates nothing; the instance holds one stream's state.
 */
export class FourierDenoiser {
  readonly options: ResolvedDenoiserOptions;
  readonly sampleRateHz: number;
  readonly enabled: boolean;
  /** Samples in one STFT hop (10 ms). */
  readonly hopSize: number;
  /** Delay from input to output, in samples and ms (0 when disabled). */
  readonly latencySamples: number;
  readonly latencyMs: number;
  private readonly stft: OverlapAddStft;
  private readonly gate: SpectralGate;

  /** Throws a RangeError naming the first option out of range. */
  constructor(options: FourierDenoiserOptions) {
    this.options = resolveDenoiserOptions(options);
    this.sampleRateHz = this.options.sampleRateHz;
    this.enabled = this.options.enabled;
    this.hopSize = this.sampleRateHz / 100;
    this.stft = new OverlapAddStft(this.hopSize);
    this.gate = new SpectralGate(this.options, this.stft);
    this.latencySamples = this.enabled ? this.hopSize : 0;
    this.latencyMs = (this.latencySamples * 1000) / this.sampleRateHz;
  }

  /** Whether the rolling baseline has replaced staticThreshold. */
  get baselineEstablished(): boolean {
    return this.gate.baselineEstablished;
  }

  /** Whether steady media is detected and the aggressive settings are in force. */
  get mediaDetected(): boolean {
    return this.gate.mediaMode;
  }

  /** The gate, for diagnostics and measurement. */
  get spectralGate(): SpectralGate {
    return this.gate;
  }

  /**
   * Denoises one frame: `input` holds 10 or 20 ms of samples, `output` receives as many (it may
   * be `input` itself). Throws a RangeError for any other length.
   */
  process(input: Int16Array, output: Int16Array): void {
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
    if (!this.enabled) {
      if (output !== input) {
        output.set(input);
      }
      return;
    }
    const stft = this.stft;
    const gate = this.gate;
    const re = stft.re;
    const im = stft.im;
    const gains = gate.gains;
    for (let offset = 0; offset < length; offset += hop) {
      // analyze() copies the hop before synthesize() overwrites it, so in place is safe.
      stft.analyze(input, offset);
      gate.update(re, im);
      for (let k = 0; k < gains.length; k++) {
        const g = gains[k]!;
        re[k] = re[k]! * g;
        im[k] = im[k]! * g;
      }
      stft.synthesize(output, offset);
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

  /** Forgets the stream: history, baseline, media state and gains. */
  reset(): void {
    this.stft.reset();
    this.gate.reset();
  }
}
