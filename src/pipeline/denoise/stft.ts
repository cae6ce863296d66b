import { checkRange } from '../../media/check-range.js';
import { RealFft } from './fft.js';

/**
 * Streaming short-time Fourier transform with weighted overlap-add resynthesis: a periodic
 * sqrt-Hann window of 2·hop samples on both analysis and synthesis, 50% overlap, zero-padded to
 * the next power of two for the FFT. The product of the two windows is a periodic Hann window,
 * whose 50%-shifted copies sum to exactly 1, so an unmodified spectrum resynthesises the input
 * (to rounding) delayed by exactly one hop.
 *
 * Use per hop: analyze() takes `hopSize` new samples and leaves the block's half spectrum in
 * `re`/`im`; the caller may scale the bins; synthesize() then writes `hopSize` output samples,
 * which are the input of one hop earlier. Samples are kept in PCM16 units (not scaled to ±1).
 * Nothing is allocated after construction.
 */
export class OverlapAddStft {
  readonly hopSize: number;
  readonly windowLength: number;
  readonly fftSize: number;
  readonly binCount: number;
  /** Σ w[n]² of the analysis window: E|X[k]|² = σ²·windowPowerSum for white noise of variance σ². */
  readonly windowPowerSum: number;
  /** Real and imaginary parts of the last analysed block's half spectrum. */
  readonly re: Float64Array;
  readonly im: Float64Array;
  private readonly fft: RealFft;
  private readonly window: Float64Array;
  /** The last windowLength input samples, oldest first. */
  private readonly history: Float64Array;
  private readonly block: Float64Array;
  /** The second half of the previous synthesised block, waiting for its overlap partner. */
  private readonly pending: Float64Array;

  constructor(hopSize: number) {
    if (!Number.isInteger(hopSize) || hopSize < 2) {
      throw new RangeError(`STFT hop must be an integer of at least 2 samples, got ${hopSize}`);
    }
    this.hopSize = hopSize;
    this.windowLength = 2 * hopSize;
    let fftSize = 4;
    while (fftSize < this.windowLength) {
      fftSize *= 2;
    }
    this.fftSize = fftSize;
    this.fft = new RealFft(fftSize);
    this.binCount = this.fft.binCount;
    this.re = new Float64Array(this.binCount);
    this.im = new Float64Array(this.binCount);
    this.window = new Float64Array(this.windowLength);
    let powerSum = 0;
    for (let n = 0; n < this.windowLength; n++) {
      const hann = 0.5 - 0.5 * Math.cos((2 * Math.PI * n) / this.windowLength);
      this.window[n] = Math.sqrt(hann);
      powerSum += hann;
    }
    this.windowPowerSum = powerSum;
    this.history = new Float64Array(this.windowLength);
    this.block = new Float64Array(fftSize);
    this.pending = new Float64Array(hopSize);
  }

  /** Takes input[offset … offset + hopSize) and transforms the newest window of samples. */
  analyze(input: Int16Array, offset: number): void {
    checkRange(input.length, offset, this.hopSize);
    const hop = this.hopSize;
    const history = this.history;
    const block = this.block;
    const window = this.window;
    history.copyWithin(0, hop);
    for (let n = 0; n < hop; n++) {
      history[hop + n] = input[offset + n]!;
    }
    for (let n = 0; n < this.windowLength; n++) {
      block[n] = history[n]! * window[n]!;
    }
    // block[windowLength … fftSize) stays zero: synthesize() only reads the first windowLength.
    block.fill(0, this.windowLength);
    this.fft.forward(block, this.re, this.im);
  }

  /** Resynthesises the (possibly modified) spectrum and writes hopSize finished samples. */
  synthesize(output: Int16Array, offset: number): void {
    checkRange(output.length, offset, this.hopSize);
    const hop = this.hopSize;
    const block = this.block;
    const window = this.window;
    const pending = this.pending;
    this.fft.inverse(this.re, this.im, block);
    for (let n = 0; n < hop; n++) {
      const value = pending[n]! + block[n]! * window[n]!;
      output[offset + n] =
        value >= 32767 ? 32767 : value <= -32768 ? -32768 : Math.round(value) | 0;
      pending[n] = block[hop + n]! * window[hop + n]!;
    }
  }

  /** Forgets all history: the next block starts a new stream from silence. */
  reset(): void {
    this.history.fill(0);
    this.pending.fill(0);
    this.re.fill(0);
    this.im.fill(0);
  }
}
