/** Test helpers: least-squares fit of a sinusoid of known frequency. */
export interface SineFit {
  amplitude: number;
  /** Phase φ of amplitude · sin(ωt + φ), in radians. */
  phase: number;
  /** RMS of what the fitted sinusoid leaves unexplained. */
  residualRms: number;
}

/** Fits a·sin(ωt) + b·cos(ωt) to samples[start…end) with t = index / sampleRateHz. */
export function fitSine(
  samples: Int16Array,
  frequencyHz: number,
  sampleRateHz: number,
  start = 0,
  end = samples.length,
): SineFit {
  let ss = 0;
  let cc = 0;
  let sc = 0;
  let ys = 0;
  let yc = 0;
  for (let i = start; i < end; i++) {
    const w = (2 * Math.PI * frequencyHz * i) / sampleRateHz;
    const s = Math.sin(w);
    const c = Math.cos(w);
    const y = samples[i]!;
    ss += s * s;
    cc += c * c;
    sc += s * c;
    ys += y * s;
    yc += y * c;
  }
  const det = ss * cc - sc * sc;
  const a = (ys * cc - yc * sc) / det;
  const b = (yc * ss - ys * sc) / det;
  let residual = 0;
  for (let i = start; i < end; i++) {
    const w = (2 * Math.PI * frequencyHz * i) / sampleRateHz;
    const e = samples[i]! - (a * Math.sin(w) + b * Math.cos(w));
    residual += e * e;
  }
  return {
    amplitude: Math.hypot(a, b),
    phase: Math.atan2(b, a),
    residualRms: Math.sqrt(residual / (end - start)),
  };
}

export function sineSamples(
  length: number,
  amplitude: number,
  frequencyHz: number,
  sampleRateHz: number,
): Int16Array {
  return Int16Array.from({ length }, (_, i) =>
    Math.round(amplitude * Math.sin((2 * Math.PI * frequencyHz * i) / sampleRateHz)),
  );
}

/** Wraps a phase difference into (−π, π]. */
export function wrapPhase(radians: number): number {
  return radians - 2 * Math.PI * Math.round(radians / (2 * Math.PI));
}

/** The frequency a tone at `frequencyHz` lands on after sampling at `sampleRateHz`. */
export function aliasOf(frequencyHz: number, sampleRateHz: number): number {
  const folded = frequencyHz % sampleRateHz;
  return folded > sampleRateHz / 2 ? sampleRateHz - folded : folded;
}
