import { FourierDenoiser, type FourierDenoisingPlan } from '../denoise/fourier-denoiser.js';
import { RnnoiseDenoiser, type SmartDenoisingPlan } from '../denoise/rnnoise-denoiser.js';

/** The assistant's `backgroundSpeechDenoisingPlan`. */
export interface BackgroundSpeechDenoisingPlan {
  readonly smartDenoisingPlan?: SmartDenoisingPlan | undefined;
  readonly fourierDenoisingPlan?: FourierDenoisingPlan | undefined;
}

/**
 * The caller's denoising stage, ahead of VAD and transcriber (api-behaviour 2.3): RNNoise for
 * `smartDenoisingPlan.enabled`, the Fourier spectral gate for `fourierDenoisingPlan.enabled`,
 * and with both, RNNoise first and the gate after it, as the platform runs Krisp then Fourier.
 * Both denoisers take the call's rate (RNNoise resamples to 48 kHz inside) and 10 or 20 ms frames.
 *
 * RNNoise's WASM module loads asynchronously (once per thread): until open() has resolved, the
 * smart stage passes audio through; if it cannot load, it keeps passing audio through and
 * `smartError` says why (the call goes on undenoised rather than ending).
 *
 * process() writes into buffers held by the instance: no allocation per frame.
 */
export class CallerDenoiser {
  readonly enabled: boolean;
  readonly #sampleRateHz: number;
  readonly #smartWanted: boolean;
  readonly #fourier: FourierDenoiser | null;
  #smart: RnnoiseDenoiser | null = null;
  #smartError: unknown = null;
  #closed = false;
  /** Output buffers for 20 and 10 ms frames (views of one array). */
  readonly #out20: Int16Array;
  readonly #out10: Int16Array;

  /** Throws a RangeError naming a plan field out of range. */
  constructor(plan: BackgroundSpeechDenoisingPlan | undefined, sampleRateHz: number) {
    this.#sampleRateHz = sampleRateHz;
    const fourierPlan = plan?.fourierDenoisingPlan;
    this.#fourier =
      fourierPlan?.enabled === true ? new FourierDenoiser({ ...fourierPlan, sampleRateHz }) : null;
    const smartEnabled = plan?.smartDenoisingPlan?.enabled ?? false;
    if (typeof smartEnabled !== 'boolean') {
      throw new RangeError(
        `smartDenoisingPlan.enabled must be true or false, got ${String(smartEnabled)}`,
      );
    }
    this.#smartWanted = smartEnabled;
    this.enabled = this.#smartWanted || this.#fourier !== null;
    const frame20 = sampleRateHz / 50;
    this.#out20 = new Int16Array(this.enabled ? frame20 : 0);
    this.#out10 = this.#out20.subarray(0, this.enabled ? frame20 / 2 : 0);
  }

  /** Delay of the denoised audio behind the input, ms (it grows once RNNoise is ready). */
  get latencyMs(): number {
    return (this.#smart?.latencyMs ?? 0) + (this.#fourier?.latencyMs ?? 0);
  }

  /** Whether RNNoise is running (smartDenoisingPlan enabled and its module loaded). */
  get smartActive(): boolean {
    return this.#smart !== null;
  }

  /** Why RNNoise could not start, or null. */
  get smartError(): unknown {
    return this.#smartError;
  }

  /** Loads RNNoise when the plan asks for it; never rejects. */
  async open(): Promise<void> {
    if (!this.#smartWanted || this.#closed) {
      return;
    }
    try {
      const smart = await RnnoiseDenoiser.create({
        enabled: true,
        sampleRateHz: this.#sampleRateHz,
      });
      if (this.#closed) {
        smart.close();
      } else {
        this.#smart = smart;
      }
    } catch (error) {
      this.#smartError = error;
    }
  }

  /** Whether `length` samples make a frame process() accepts (10 or 20 ms). */
  accepts(length: number): boolean {
    return length === this.#out20.length || length === this.#out10.length;
  }

  /**
   * Denoises one 10 or 20 ms frame; returns the denoised samples, valid until the next call
   * (`samples` itself when the plan enables nothing). Throws a RangeError for other lengths.
   */
  process(samples: Int16Array): Int16Array {
    if (!this.enabled) {
      return samples;
    }
    if (!this.accepts(samples.length)) {
      throw new RangeError(
        `denoising takes 10 or 20 ms frames (${this.#out10.length} or ${this.#out20.length} ` +
          `samples at ${this.#sampleRateHz} Hz), got ${samples.length} samples`,
      );
    }
    const out = samples.length === this.#out20.length ? this.#out20 : this.#out10;
    let input = samples;
    if (this.#smart !== null) {
      this.#smart.process(input, out);
      input = out;
    }
    if (this.#fourier !== null) {
      this.#fourier.process(input, out);
      input = out;
    }
    if (input !== out) {
      out.set(input);
    }
    return out;
  }

  close(): void {
    this.#closed = true;
    this.#smart?.close();
    this.#smart = null;
  }
}
