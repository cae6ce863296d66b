import { checkRange } from '../check-range.js';
import {
  ANTILOG,
  HIGH_DECISION_LEVEL,
  HIGH_LEVELS,
  HIGH_LOG_STEP_WEIGHTS,
  LOW_CODE_NEGATIVE,
  LOW_CODE_POSITIVE,
  LOW_DECISION_LEVELS,
  LOW_LEVELS_4BIT,
  LOW_LEVELS_6BIT,
  LOW_LOG_STEP_WEIGHTS,
} from './g722-tables.js';

/*
 * ITU-T G.722 at 64 kbit/s (mode 1), in the Recommendation's fixed-point arithmetic so that both
 * ends agree bit for bit with other implementations. A 24-tap QMF splits 16 kHz PCM into a lower
 * and an upper band at 8 kHz each; each band is coded by ADPCM: a predictor (2 poles, 6 zeros,
 * adapted by sign-sign rules) estimates the next sub-band sample, and the error is quantised to
 * 6 bits (lower band) or 2 bits (upper band) with a step that follows the signal in the log
 * domain. The lower band predictor and step adapt on the top 4 of its 6 bits only (the embedded
 * code of G.722's 56 and 48 kbit/s modes), so a decoder stays in step with the encoder in every
 * mode. Octets carry the upper-band code in bits 7…6 and the lower-band code in bits 5…0
 * (RFC 3551 §4.5.2). Comments in brackets name the Recommendation's blocks. The output is
 * bit-exact with FFmpeg's G.722 on the fixtures of test/media/codecs/g722.test.ts.
 */

/** Each band's initial scale factor [DETL/DETH], log scale factor bound, and antilog shift. */
interface BandConstants {
  readonly initialStep: number;
  readonly maxLogStep: number;
  readonly stepShift: number;
}
const LOW_BAND: BandConstants = { initialStep: 32, maxLogStep: 18432, stepShift: 8 };
const HIGH_BAND: BandConstants = { initialStep: 8, maxLogStep: 22528, stepShift: 10 };
/** The decoder's reconstructed sub-band signals are limited to 15 bits [LIMIT]. */
const SUBBAND_MIN = -16384;
const SUBBAND_MAX = 16383;
/** QMF history kept between calls: 22 input samples (encoder), 11 sub-band pairs (decoder). */
const ENCODER_HISTORY = 22;
const DECODER_HISTORY = 11;
/** Room after the history, so that the window slides by a copy once every this many samples. */
const WINDOW_SLACK = 512;

function saturate16(x: number): number {
  return x > 32767 ? 32767 : x < -32768 ? -32768 : x;
}

/*
 * [QMF] The 24 taps h0…h23 (× 2^13) are symmetric; the even taps h(2i), i = 0…11, are
 * 3, −11, 12, 32, −210, 951, 3876, −805, 362, −156, 53, −11 and the odd taps h(2i+1) are the same
 * reversed. Written out so that the coefficients are immediates (faster than a loop over a table).
 */

/** Σ h(2i)·x[newest − i·stride], i = 0…11. */
function evenTapSum(x: Int32Array, newest: number, stride: number): number {
  return (
    3 * x[newest]! -
    11 * x[newest - stride]! +
    12 * x[newest - 2 * stride]! +
    32 * x[newest - 3 * stride]! -
    210 * x[newest - 4 * stride]! +
    951 * x[newest - 5 * stride]! +
    3876 * x[newest - 6 * stride]! -
    805 * x[newest - 7 * stride]! +
    362 * x[newest - 8 * stride]! -
    156 * x[newest - 9 * stride]! +
    53 * x[newest - 10 * stride]! -
    11 * x[newest - 11 * stride]!
  );
}

/** Σ h(2i+1)·x[newest − i·stride], i = 0…11. */
function oddTapSum(x: Int32Array, newest: number, stride: number): number {
  return (
    -11 * x[newest]! +
    53 * x[newest - stride]! -
    156 * x[newest - 2 * stride]! +
    362 * x[newest - 3 * stride]! -
    805 * x[newest - 4 * stride]! +
    3876 * x[newest - 5 * stride]! +
    951 * x[newest - 6 * stride]! -
    210 * x[newest - 7 * stride]! +
    32 * x[newest - 8 * stride]! +
    12 * x[newest - 9 * stride]! -
    11 * x[newest - 10 * stride]! +
    3 * x[newest - 11 * stride]!
  );
}

/**
 * One sub-band's adaptive state, the same in encoder and decoder: the step size, the
 * pole-zero predictor and its estimate of the next sample.
 */
class SubbandAdapter {
  /** Signal estimate [SL/SH] for the next sample, and its zero-section part [SZL/SZH]. */
  estimate = 0;
  zeroEstimate = 0;
  /** Quantiser scale factor [DETL/DETH] and its log [NBL/NBH]. */
  step: number;
  logStep = 0;
  /** Pole coefficients [AL1, AL2]. */
  pole1 = 0;
  pole2 = 0;
  /** Reconstructed signal [RLT] one and two samples ago. */
  reconstructed1 = 0;
  reconstructed2 = 0;
  /** Whether the partially reconstructed signal [PLT] was negative one and two samples ago. */
  partialNegative1 = false;
  partialNegative2 = false;
  /** Zero coefficients [BL1…BL6] and the quantised differences [DLT1…DLT6] they weigh. */
  readonly zeros = new Int32Array(6);
  readonly differences = new Int32Array(6);

  constructor(private readonly band: BandConstants) {
    this.step = band.initialStep;
  }

  reset(): void {
    this.estimate = 0;
    this.zeroEstimate = 0;
    this.step = this.band.initialStep;
    this.logStep = 0;
    this.pole1 = 0;
    this.pole2 = 0;
    this.reconstructed1 = 0;
    this.reconstructed2 = 0;
    this.partialNegative1 = false;
    this.partialNegative2 = false;
    this.zeros.fill(0);
    this.differences.fill(0);
  }

  /** [LOGSCL/LOGSCH] then [SCALEL/SCALEH]: leaks the log step, adds `weight`, takes the antilog. */
  adaptStep(weight: number): void {
    let logStep = ((this.logStep * 32512) >> 15) + weight;
    logStep = logStep < 0 ? 0 : logStep > this.band.maxLogStep ? this.band.maxLogStep : logStep;
    this.logStep = logStep;
    // ANTILOG[fraction] >> (shift - integer part); the shift reaches -1 at the top of the range.
    const shift = this.band.stepShift + 1 - (logStep >> 11);
    this.step = ((ANTILOG[(logStep >> 6) & 31]! << 1) >> shift) << 2;
  }

  /**
   * Adapts the predictor to the quantised difference `difference` [DLT/DH] and forms the estimate
   * of the next sample.
   */
  adaptPredictor(difference: number): void {
    // [RECONS], [PARREC]: only the sign of the partial reconstruction is used.
    const reconstructed = saturate16(this.estimate + difference);
    const negative = this.zeroEstimate + difference < 0;
    // [UPPOL2]: the pole coefficients follow sign agreements of the partial reconstruction.
    const pole1 = this.pole1;
    let pole2Term = pole1 < -8192 ? -32768 : pole1 > 8191 ? 32767 : pole1 << 2;
    pole2Term = negative === this.partialNegative1 ? -pole2Term : pole2Term;
    // A 16-bit negation: −(−32768) saturates.
    if (pole2Term > 32767) {
      pole2Term = 32767;
    }
    let pole2 =
      (pole2Term >> 7) +
      (negative === this.partialNegative2 ? 128 : -128) +
      ((this.pole2 * 32512) >> 15);
    pole2 = pole2 > 12288 ? 12288 : pole2 < -12288 ? -12288 : pole2;
    // [UPPOL1]: limited so that the two-pole section stays stable.
    let newPole1 = saturate16(
      (negative === this.partialNegative1 ? 192 : -192) + ((pole1 * 32640) >> 15),
    );
    const pole1Limit = 15360 - pole2;
    newPole1 = newPole1 > pole1Limit ? pole1Limit : newPole1 < -pole1Limit ? -pole1Limit : newPole1;
    // [UPZERO]: leak each zero, then step it towards sign agreement of this and its past
    // difference (a leaked coefficient ± 128 stays within 16 bits). [DELAYA]: shift the
    // differences. [FILTEZ]: the zero section's estimate of the next sample. Unrolled: this is
    // the codec's innermost work, twice per octet.
    const zeros = this.zeros;
    const differences = this.differences;
    const increment = difference === 0 ? 0 : 128;
    const d1 = differences[0]!;
    const d2 = differences[1]!;
    const d3 = differences[2]!;
    const d4 = differences[3]!;
    const d5 = differences[4]!;
    const d6 = differences[5]!;
    const b1 = ((d1 ^ difference) < 0 ? -increment : increment) + ((zeros[0]! * 32640) >> 15);
    const b2 = ((d2 ^ difference) < 0 ? -increment : increment) + ((zeros[1]! * 32640) >> 15);
    const b3 = ((d3 ^ difference) < 0 ? -increment : increment) + ((zeros[2]! * 32640) >> 15);
    const b4 = ((d4 ^ difference) < 0 ? -increment : increment) + ((zeros[3]! * 32640) >> 15);
    const b5 = ((d5 ^ difference) < 0 ? -increment : increment) + ((zeros[4]! * 32640) >> 15);
    const b6 = ((d6 ^ difference) < 0 ? -increment : increment) + ((zeros[5]! * 32640) >> 15);
    zeros[0] = b1;
    zeros[1] = b2;
    zeros[2] = b3;
    zeros[3] = b4;
    zeros[4] = b5;
    zeros[5] = b6;
    differences[0] = difference;
    differences[1] = d1;
    differences[2] = d2;
    differences[3] = d3;
    differences[4] = d4;
    differences[5] = d5;
    const zeroEstimate =
      ((b1 * saturate16(difference << 1)) >> 15) +
      ((b2 * saturate16(d1 << 1)) >> 15) +
      ((b3 * saturate16(d2 << 1)) >> 15) +
      ((b4 * saturate16(d3 << 1)) >> 15) +
      ((b5 * saturate16(d4 << 1)) >> 15) +
      ((b6 * saturate16(d5 << 1)) >> 15);
    this.reconstructed2 = this.reconstructed1;
    this.reconstructed1 = reconstructed;
    this.partialNegative2 = this.partialNegative1;
    this.partialNegative1 = negative;
    this.pole1 = newPole1;
    this.pole2 = pole2;
    // [FILTEP], [PREDIC]: the pole section's estimate, and the estimate of the next sample.
    const poleEstimate = saturate16(
      ((newPole1 * saturate16(reconstructed << 1)) >> 15) +
        ((pole2 * saturate16(this.reconstructed2 << 1)) >> 15),
    );
    // Implementations differ in where they saturate the partial sums of the estimate; that
    // matters only for pathological input: none of the test signals (full-scale square waves and
    // noise included) takes this sum out of 16 bits.
    this.zeroEstimate = saturate16(zeroEstimate);
    this.estimate = saturate16(poleEstimate + this.zeroEstimate);
  }
}

/** Stateful 64 kbit/s G.722 encoder: 16 kHz PCM16 in, one byte per two samples out. */
export class G722Encoder {
  private readonly low = new SubbandAdapter(LOW_BAND);
  private readonly high = new SubbandAdapter(HIGH_BAND);
  /** Input samples; the QMF window is the 24 up to `windowEnd` (exclusive). */
  private readonly window = new Int32Array(ENCODER_HISTORY + WINDOW_SLACK);
  private windowEnd = ENCODER_HISTORY;

  /** Back to the initial state (a new stream). */
  reset(): void {
    this.low.reset();
    this.high.reset();
    this.window.fill(0);
    this.windowEnd = ENCODER_HISTORY;
  }

  /**
   * Encodes `sampleCount` (even) samples of 16 kHz PCM16 from `pcm[pcmOffset]` into
   * `out[outOffset]`; returns the bytes written (sampleCount / 2). Allocates nothing.
   */
  encode(
    pcm: Int16Array,
    pcmOffset: number,
    sampleCount: number,
    out: Uint8Array,
    outOffset: number,
  ): number {
    checkRange(pcm.length, pcmOffset, sampleCount);
    if (sampleCount % 2 !== 0) {
      throw new RangeError(`G.722 encodes pairs of samples, got ${sampleCount} samples`);
    }
    const byteCount = sampleCount / 2;
    checkRange(out.length, outOffset, byteCount);
    const window = this.window;
    const low = this.low;
    const high = this.high;
    let end = this.windowEnd;
    for (let n = 0; n < byteCount; n++) {
      if (end === window.length) {
        window.copyWithin(0, end - ENCODER_HISTORY, end);
        end = ENCODER_HISTORY;
      }
      window[end] = pcm[pcmOffset + 2 * n]!;
      window[end + 1] = pcm[pcmOffset + 2 * n + 1]!;
      end += 2;
      // [QMF] analysis: the even taps weigh the newest sample and every second one before it.
      const evenSum = evenTapSum(window, end - 1, 2);
      const oddSum = oddTapSum(window, end - 2, 2);
      const lowCode = encodeLow(low, (evenSum + oddSum) >> 14);
      const highCode = encodeHigh(high, (evenSum - oddSum) >> 14);
      out[outOffset + n] = (highCode << 6) | lowCode;
    }
    this.windowEnd = end;
    return byteCount;
  }
}

/** [SUBTRA], [QUANTL], [INVQAL], then the adaptation: one lower-band sample to its 6-bit code. */
function encodeLow(band: SubbandAdapter, sample: number): number {
  const error = saturate16(sample - band.estimate);
  const magnitude = error < 0 ? -(error + 1) : error;
  const step = band.step;
  // The first interval whose upper decision level exceeds the magnitude (30 if none does).
  let lowest = 1;
  let highest = 30;
  while (lowest < highest) {
    const middle = (lowest + highest) >> 1;
    if (magnitude < (LOW_DECISION_LEVELS[middle]! * step) >> 12) {
      highest = middle;
    } else {
      lowest = middle + 1;
    }
  }
  const code = error < 0 ? LOW_CODE_NEGATIVE[lowest]! : LOW_CODE_POSITIVE[lowest]!;
  const embedded = code >> 2;
  band.adaptStep(LOW_LOG_STEP_WEIGHTS[embedded]!);
  band.adaptPredictor((step * LOW_LEVELS_4BIT[embedded]!) >> 15);
  return code;
}

/** [SUBTRA], [QUANTH], [INVQAH], then the adaptation: one upper-band sample to its 2-bit code. */
function encodeHigh(band: SubbandAdapter, sample: number): number {
  const error = saturate16(sample - band.estimate);
  const magnitude = error < 0 ? -(error + 1) : error;
  const step = band.step;
  const code = (magnitude < (HIGH_DECISION_LEVEL * step) >> 12 ? 1 : 0) + (error < 0 ? 0 : 2);
  band.adaptStep(HIGH_LOG_STEP_WEIGHTS[code]!);
  band.adaptPredictor((step * HIGH_LEVELS[code]!) >> 15);
  return code;
}

/** Stateful 64 kbit/s G.722 decoder: one byte in, two 16 kHz PCM16 samples out. */
export class G722Decoder {
  private readonly low = new SubbandAdapter(LOW_BAND);
  private readonly high = new SubbandAdapter(HIGH_BAND);
  /** Sub-band differences and sums; the QMF window is the 12 up to `windowEnd` (exclusive). */
  private readonly differenceWindow = new Int32Array(DECODER_HISTORY + WINDOW_SLACK);
  private readonly sumWindow = new Int32Array(DECODER_HISTORY + WINDOW_SLACK);
  private windowEnd = DECODER_HISTORY;

  /** Back to the initial state (a new stream). */
  reset(): void {
    this.low.reset();
    this.high.reset();
    this.differenceWindow.fill(0);
    this.sumWindow.fill(0);
    this.windowEnd = DECODER_HISTORY;
  }

  /**
   * Decodes `byteCount` bytes from `bytes[offset]` into `out[outOffset]`; returns the samples
   * written (2 × byteCount). Allocates nothing.
   */
  decode(
    bytes: Uint8Array,
    offset: number,
    byteCount: number,
    out: Int16Array,
    outOffset: number,
  ): number {
    checkRange(bytes.length, offset, byteCount);
    checkRange(out.length, outOffset, 2 * byteCount);
    const differences = this.differenceWindow;
    const sums = this.sumWindow;
    const low = this.low;
    const high = this.high;
    let end = this.windowEnd;
    for (let n = 0; n < byteCount; n++) {
      const octet = bytes[offset + n]!;
      const lowSample = decodeLow(low, octet & 63);
      const highSample = decodeHigh(high, octet >> 6);
      if (end === differences.length) {
        differences.copyWithin(0, end - DECODER_HISTORY, end);
        sums.copyWithin(0, end - DECODER_HISTORY, end);
        end = DECODER_HISTORY;
      }
      differences[end] = lowSample - highSample;
      sums[end] = lowSample + highSample;
      end++;
      // [QMF] synthesis: even taps over the differences, odd taps over the sums, newest first.
      out[outOffset + 2 * n] = saturate16(evenTapSum(differences, end - 1, 1) >> 11);
      out[outOffset + 2 * n + 1] = saturate16(oddTapSum(sums, end - 1, 1) >> 11);
    }
    this.windowEnd = end;
    return 2 * byteCount;
  }
}

/** [INVQBL], [RECONS], [LIMIT], then the adaptation on the embedded 4-bit code. */
function decodeLow(band: SubbandAdapter, code: number): number {
  const step = band.step;
  const sample = band.estimate + ((step * LOW_LEVELS_6BIT[code]!) >> 15);
  const embedded = code >> 2;
  band.adaptStep(LOW_LOG_STEP_WEIGHTS[embedded]!);
  band.adaptPredictor((step * LOW_LEVELS_4BIT[embedded]!) >> 15);
  return sample < SUBBAND_MIN ? SUBBAND_MIN : sample > SUBBAND_MAX ? SUBBAND_MAX : sample;
}

/** [INVQAH], [RECONS], [LIMIT], then the adaptation. */
function decodeHigh(band: SubbandAdapter, code: number): number {
  const step = band.step;
  const difference = (step * HIGH_LEVELS[code]!) >> 15;
  const sample = band.estimate + difference;
  band.adaptStep(HIGH_LOG_STEP_WEIGHTS[code]!);
  band.adaptPredictor(difference);
  return sample < SUBBAND_MIN ? SUBBAND_MIN : sample > SUBBAND_MAX ? SUBBAND_MAX : sample;
}
