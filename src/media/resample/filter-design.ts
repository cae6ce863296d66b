/**
 * Design of the polyphase low-pass filters the resampler runs: a windowed-sinc prototype with a
 * Kaiser window at L times the input rate, split into L phases. Pure functions; the resampler
 * caches the tables per rate pair.
 */
export interface FilterSpec {
  /** Stopband attenuation the Kaiser window is sized for. Default 80 dB. */
  stopbandAttenuationDb?: number;
  /** Passband edge as a fraction of the lower Nyquist frequency. Default 0.85. */
  passbandEdge?: number;
  /** Stopband edge as a fraction of the lower Nyquist frequency. Default 1. */
  stopbandEdge?: number;
}

/**
 * Rate pairs whose L (outputRateHz / gcd) is at most this get an exact table of L phases; above
 * it (unusual rates such as 8001 Hz, where L can reach 48000) the table holds INTERPOLATED_PHASES
 * phases plus one, and the resampler interpolates linearly between the two phases around each
 * output's exact position. With 512 phases the interpolation error stays below −100 dB for the
 * band the filter passes.
 */
export const MAX_EXACT_PHASES = 1024;
export const INTERPOLATED_PHASES = 512;

export interface PolyphaseFilter {
  inputRateHz: number;
  outputRateHz: number;
  /** Interpolation factor L: outputRateHz / gcd. */
  upFactor: number;
  /** Decimation factor M: inputRateHz / gcd. */
  downFactor: number;
  /**
   * Phases P of the prototype: upFactor when the table is exact, else INTERPOLATED_PHASES (and
   * the table then holds P + 1 phases: the last one falls one whole input sample after phase 0).
   */
  phases: number;
  /** Whether outputs between table phases are interpolated (P ≠ L). */
  interpolated: boolean;
  tapsPerPhase: number;
  /**
   * Phases of tapsPerPhase coefficients each. Phase p, tap k multiplies input sample
   * x[i - (tapsPerPhase - 1) + k] for an output that falls p/P of a sample after x[i]; each phase
   * sums to 1 (unity gain at DC).
   */
  coefficients: Float64Array;
  passbandEdgeHz: number;
  stopbandEdgeHz: number;
  stopbandAttenuationDb: number;
  kaiserBeta: number;
  /** Delay of the linear-phase prototype, in input samples. */
  groupDelayInputSamples: number;
}

export function greatestCommonDivisor(a: number, b: number): number {
  let x = a;
  let y = b;
  while (y !== 0) {
    const t = x % y;
    x = y;
    y = t;
  }
  return x;
}

/** Modified Bessel function of the first kind, order 0, by its power series. */
export function besselI0(x: number): number {
  const half = x / 2;
  let term = 1;
  let sum = 1;
  for (let k = 1; k < 200; k++) {
    term *= (half / k) * (half / k);
    sum += term;
    if (term < sum * 1e-17) {
      break;
    }
  }
  return sum;
}

/** Kaiser's formula for β from the stopband attenuation in dB. */
export function kaiserBeta(attenuationDb: number): number {
  if (attenuationDb > 50) {
    return 0.1102 * (attenuationDb - 8.7);
  }
  if (attenuationDb >= 21) {
    return 0.5842 * (attenuationDb - 21) ** 0.4 + 0.07886 * (attenuationDb - 21);
  }
  return 0;
}

export function designPolyphaseFilter(
  inputRateHz: number,
  outputRateHz: number,
  spec: FilterSpec = {},
): PolyphaseFilter {
  for (const rate of [inputRateHz, outputRateHz]) {
    if (!Number.isInteger(rate) || rate <= 0) {
      throw new RangeError(`sample rates must be positive integers, got ${rate}`);
    }
  }
  const attenuationDb = spec.stopbandAttenuationDb ?? 80;
  const passbandEdge = spec.passbandEdge ?? 0.85;
  const stopbandEdge = spec.stopbandEdge ?? 1;
  if (!(attenuationDb >= 21 && attenuationDb <= 160)) {
    throw new RangeError(`stopband attenuation must be 21–160 dB, got ${attenuationDb}`);
  }
  if (!(passbandEdge > 0 && passbandEdge < stopbandEdge && stopbandEdge <= 1.2)) {
    throw new RangeError('band edges must satisfy 0 < passbandEdge < stopbandEdge <= 1.2');
  }
  const gcd = greatestCommonDivisor(inputRateHz, outputRateHz);
  const upFactor = outputRateHz / gcd;
  const downFactor = inputRateHz / gcd;
  const interpolated = upFactor > MAX_EXACT_PHASES;
  const phases = interpolated ? INTERPOLATED_PHASES : upFactor;
  const tablePhases = interpolated ? phases + 1 : phases;
  const nyquistHz = Math.min(inputRateHz, outputRateHz) / 2;
  const passbandEdgeHz = passbandEdge * nyquistHz;
  const stopbandEdgeHz = stopbandEdge * nyquistHz;
  const prototypeRateHz = phases * inputRateHz;

  // Kaiser's length estimate for the transition width, rounded up to whole phases.
  const transition = (2 * Math.PI * (stopbandEdgeHz - passbandEdgeHz)) / prototypeRateHz;
  const estimatedLength = Math.ceil((attenuationDb - 7.95) / (2.285 * transition)) + 1;
  const tapsPerPhase = Math.max(2, Math.ceil(estimatedLength / phases));
  const length = tapsPerPhase * phases;
  const beta = kaiserBeta(attenuationDb);
  const center = (length - 1) / 2;
  const cutoff = (passbandEdgeHz + stopbandEdgeHz) / 2 / prototypeRateHz; // cycles per sample
  const i0Beta = besselI0(beta);

  // One sample past the end for the extra phase of an interpolated table (the window is 0 there).
  const prototype = new Float64Array(length + 1);
  for (let j = 0; j < length; j++) {
    const t = j - center;
    const sinc = t === 0 ? 2 * cutoff : Math.sin(2 * Math.PI * cutoff * t) / (Math.PI * t);
    const r = t / center;
    const window = besselI0(beta * Math.sqrt(Math.max(0, 1 - r * r))) / i0Beta;
    prototype[j] = sinc * window;
  }

  // Output phase p uses prototype taps p, p + P, p + 2P, … against x[i], x[i-1], x[i-2], …;
  // store each phase reversed so the inner loop walks coefficients and input forwards.
  const coefficients = new Float64Array(tablePhases * tapsPerPhase);
  for (let p = 0; p < tablePhases; p++) {
    let sum = 0;
    for (let k = 0; k < tapsPerPhase; k++) {
      sum += prototype[p + k * phases]!;
    }
    for (let k = 0; k < tapsPerPhase; k++) {
      coefficients[p * tapsPerPhase + (tapsPerPhase - 1 - k)] = prototype[p + k * phases]! / sum;
    }
  }

  return {
    inputRateHz,
    outputRateHz,
    upFactor,
    downFactor,
    phases,
    interpolated,
    tapsPerPhase,
    coefficients,
    passbandEdgeHz,
    stopbandEdgeHz,
    stopbandAttenuationDb: attenuationDb,
    kaiserBeta: beta,
    groupDelayInputSamples: (length - 1) / (2 * phases),
  };
}

/**
 * Gain in dB of the filter's prototype at `frequencyHz` (on the prototype's P × input rate
 * clock), relative to unity: the frequency response of the whole resampler before its output
 * decimation. For analysis and tests; O(taps) per call.
 */
export function filterGainDb(filter: PolyphaseFilter, frequencyHz: number): number {
  const { phases: upFactor, tapsPerPhase, coefficients } = filter;
  const omega = (2 * Math.PI * frequencyHz) / (upFactor * filter.inputRateHz);
  let re = 0;
  let im = 0;
  for (let p = 0; p < upFactor; p++) {
    for (let k = 0; k < tapsPerPhase; k++) {
      const h = coefficients[p * tapsPerPhase + (tapsPerPhase - 1 - k)]!;
      const j = p + k * upFactor;
      re += h * Math.cos(omega * j);
      im -= h * Math.sin(omega * j);
    }
  }
  // Each phase sums to 1, so the prototype's DC gain is L.
  return 20 * Math.log10(Math.hypot(re, im) / upFactor);
}
