import { checkRange } from '../check-range.js';
import { designPolyphaseFilter, type FilterSpec, type PolyphaseFilter } from './filter-design.js';

/** The common rates (vendors, codecs, devices); any integer rate in 8000–48000 Hz works. */
export const RESAMPLER_RATES_HZ = [8000, 16000, 24000, 44100, 48000] as const;
export type ResamplerRateHz = (typeof RESAMPLER_RATES_HZ)[number];
export const MIN_RESAMPLER_RATE_HZ = 8000;
export const MAX_RESAMPLER_RATE_HZ = 48000;

/** Whether the resampler converts from or to `rateHz` (an integer in 8000–48000 Hz). */
export function isResamplerRate(rateHz: number): boolean {
  return (
    Number.isInteger(rateHz) && rateHz >= MIN_RESAMPLER_RATE_HZ && rateHz <= MAX_RESAMPLER_RATE_HZ
  );
}

export interface ResamplerOptions extends FilterSpec {
  /** Any integer rate in 8000–48000 Hz. */
  inputRateHz: number;
  /** Any integer rate in 8000–48000 Hz. */
  outputRateHz: number;
}

/** Input samples converted per inner block; bounds the working buffer. */
const BLOCK_SAMPLES = 2048;

/**
 * Filter tables by rate pair. Clients may pick unusual rates, so the cache is bounded: beyond
 * MAX_CACHED_FILTERS the least recently created table is dropped (its resamplers keep it).
 */
const filterCache = new Map<string, PolyphaseFilter>();
const MAX_CACHED_FILTERS = 64;

function cachedFilter(options: ResamplerOptions): PolyphaseFilter {
  const key = [
    options.inputRateHz,
    options.outputRateHz,
    options.stopbandAttenuationDb ?? '',
    options.passbandEdge ?? '',
    options.stopbandEdge ?? '',
  ].join('/');
  let filter = filterCache.get(key);
  if (filter === undefined) {
    const spec: FilterSpec = {};
    if (options.stopbandAttenuationDb !== undefined) {
      spec.stopbandAttenuationDb = options.stopbandAttenuationDb;
    }
    if (options.passbandEdge !== undefined) {
      spec.passbandEdge = options.passbandEdge;
    }
    if (options.stopbandEdge !== undefined) {
      spec.stopbandEdge = options.stopbandEdge;
    }
    filter = designPolyphaseFilter(options.inputRateHz, options.outputRateHz, spec);
    filterCache.set(key, filter);
    if (filterCache.size > MAX_CACHED_FILTERS) {
      const oldest = filterCache.keys().next().value;
      if (oldest !== undefined) {
        filterCache.delete(oldest);
      }
    }
  }
  return filter;
}

/**
 * Streaming rational-ratio resampler for mono PCM16: a polyphase windowed-sinc (Kaiser) filter,
 * L/M = outputRateHz/inputRateHz in lowest terms (44100 → 48000 is 160/147; 11025 → 16000 is
 * 640/441). When L exceeds MAX_EXACT_PHASES (rates with few common factors, such as 8001 Hz) the
 * table holds 512 phases and each output interpolates between the two around its exact position,
 * which costs a second dot product per output sample. The low-pass cuts
 * off below the lower of the two Nyquist frequencies (by default the passband ends at 0.85 and
 * the stopband starts at 1.0 of it, 80 dB down). Filter tables are built once per rate pair and
 * shared by all instances. Equal rates pass samples through unchanged.
 *
 * The resampler keeps its history across calls: cutting a stream into chunks of any size gives
 * the same samples as one call, and after N input samples exactly ceil(N × L / M) output samples
 * have come out in total. Output lags input by `groupDelayMs`. process() allocates nothing.
 */
export class Resampler {
  readonly inputRateHz: number;
  readonly outputRateHz: number;
  readonly upFactor: number;
  readonly downFactor: number;
  readonly tapsPerPhase: number;
  /** Filter delay in input samples (possibly fractional). */
  readonly groupDelayInputSamples: number;
  /** Filter delay in output samples (possibly fractional). */
  readonly groupDelayOutputSamples: number;
  readonly groupDelayMs: number;
  readonly filter: PolyphaseFilter | null;
  private readonly coefficients: Float64Array;
  /** Table phases per input sample when interpolating (0 when the table is exact). */
  private readonly tablePhases: number;
  /** tapsPerPhase − 1 samples of history followed by up to BLOCK_SAMPLES new ones. */
  private readonly window: Float64Array;
  private readonly stepWhole: number;
  private readonly stepFraction: number;
  /** Input index of the next output, relative to the next input sample to arrive (≥ 0). */
  private nextIndex: number;
  /** Phase (0 … L−1) of the next output. */
  private nextPhase: number;

  constructor(options: ResamplerOptions) {
    for (const rate of [options.inputRateHz, options.outputRateHz]) {
      if (!isResamplerRate(rate)) {
        throw new RangeError(
          `resampler rates must be integers in ${MIN_RESAMPLER_RATE_HZ}–${MAX_RESAMPLER_RATE_HZ} Hz, got ${rate}`,
        );
      }
    }
    this.inputRateHz = options.inputRateHz;
    this.outputRateHz = options.outputRateHz;
    this.filter = options.inputRateHz === options.outputRateHz ? null : cachedFilter(options);
    const filter = this.filter;
    this.upFactor = filter?.upFactor ?? 1;
    this.downFactor = filter?.downFactor ?? 1;
    this.tapsPerPhase = filter?.tapsPerPhase ?? 1;
    this.coefficients = filter?.coefficients ?? new Float64Array(1).fill(1);
    this.tablePhases = filter?.interpolated === true ? filter.phases : 0;
    this.groupDelayInputSamples = filter?.groupDelayInputSamples ?? 0;
    this.groupDelayOutputSamples = (this.groupDelayInputSamples * this.upFactor) / this.downFactor;
    this.groupDelayMs = (this.groupDelayInputSamples * 1000) / this.inputRateHz;
    this.window = new Float64Array(this.tapsPerPhase - 1 + BLOCK_SAMPLES);
    this.stepWhole = Math.floor(this.downFactor / this.upFactor);
    this.stepFraction = this.downFactor % this.upFactor;
    this.nextIndex = 0;
    this.nextPhase = 0;
  }

  /** Exactly how many samples the next process() call with `inputLength` samples will write. */
  outputLengthFor(inputLength: number): number {
    const span =
      inputLength * this.upFactor - 1 - (this.nextIndex * this.upFactor + this.nextPhase);
    return span < 0 ? 0 : Math.floor(span / this.downFactor) + 1;
  }

  /** An upper bound on outputLengthFor(inputLength), whatever the state: for sizing buffers. */
  maxOutputLength(inputLength: number): number {
    return Math.ceil((inputLength * this.upFactor) / this.downFactor);
  }

  /** Forgets the history: the next sample starts a new stream. */
  reset(): void {
    this.window.fill(0);
    this.nextIndex = 0;
    this.nextPhase = 0;
  }

  /**
   * Resamples `inputLength` samples of `input` from `inputOffset` into `output` from
   * `outputOffset`; returns the number of samples written, which is outputLengthFor(inputLength).
   * Throws a RangeError, before changing any state, when `output` lacks the room.
   */
  process(
    input: Int16Array,
    output: Int16Array,
    inputOffset = 0,
    inputLength = input.length - inputOffset,
    outputOffset = 0,
  ): number {
    checkRange(input.length, inputOffset, inputLength);
    const expected = this.outputLengthFor(inputLength);
    checkRange(output.length, outputOffset, expected);
    if (this.filter === null) {
      for (let i = 0; i < inputLength; i++) {
        output[outputOffset + i] = input[inputOffset + i]!;
      }
      return inputLength;
    }
    const taps = this.tapsPerPhase;
    const history = taps - 1;
    const window = this.window;
    const coefficients = this.coefficients;
    const upFactor = this.upFactor;
    const stepWhole = this.stepWhole;
    const stepFraction = this.stepFraction;
    let index = this.nextIndex;
    let phase = this.nextPhase;
    let written = outputOffset;
    let consumed = 0;
    const tablePhases = this.tablePhases;
    const phaseScale = tablePhases / upFactor;
    while (consumed < inputLength) {
      const remaining = inputLength - consumed;
      const block = remaining < BLOCK_SAMPLES ? remaining : BLOCK_SAMPLES;
      const source = inputOffset + consumed;
      for (let k = 0; k < block; k++) {
        window[history + k] = input[source + k]!;
      }
      while (index < block) {
        let acc: number;
        if (tablePhases === 0) {
          acc = dotProduct(coefficients, phase * taps, window, index, taps);
        } else {
          // Between table phases p0 and p0 + 1 (the table has P + 1 phases, so p0 + 1 exists).
          const position = phase * phaseScale;
          const p0 = Math.floor(position);
          const t = position - p0;
          const a = dotProduct(coefficients, p0 * taps, window, index, taps);
          const b = dotProduct(coefficients, (p0 + 1) * taps, window, index, taps);
          acc = a + t * (b - a);
        }
        output[written++] = acc >= 32767 ? 32767 : acc <= -32768 ? -32768 : Math.round(acc);
        index += stepWhole;
        phase += stepFraction;
        if (phase >= upFactor) {
          phase -= upFactor;
          index++;
        }
      }
      window.copyWithin(0, block, block + history);
      index -= block;
      consumed += block;
    }
    this.nextIndex = index;
    this.nextPhase = phase;
    return written - outputOffset;
  }
}

/** Σ a[aOffset + k] · b[bOffset + k] for k < length, with four partial sums. */
function dotProduct(
  a: Float64Array,
  aOffset: number,
  b: Float64Array,
  bOffset: number,
  length: number,
): number {
  let acc0 = 0;
  let acc1 = 0;
  let acc2 = 0;
  let acc3 = 0;
  let k = 0;
  const unrolled = length - (length % 4);
  for (; k < unrolled; k += 4) {
    const i = aOffset + k;
    const j = bOffset + k;
    acc0 += a[i]! * b[j]!;
    acc1 += a[i + 1]! * b[j + 1]!;
    acc2 += a[i + 2]! * b[j + 2]!;
    acc3 += a[i + 3]! * b[j + 3]!;
  }
  for (; k < length; k++) {
    acc0 += a[aOffset + k]! * b[bOffset + k]!;
  }
  return acc0 + acc1 + (acc2 + acc3);
}
