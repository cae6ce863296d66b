/**
 * Capacity search: ramps concurrent calls until the first frame-deadline misses (late or missing
 * assistant audio, heard in the audio itself), failed calls, or added latency p99 over a
 * threshold; then narrows the step between the last good and first bad concurrency by bisection.
 * Pure: the measuring is a function passed in.
 */
export interface CapacityPoint {
  concurrency: number;
  addedP50Ms: number | null;
  addedP99Ms: number | null;
  /** Late chunks plus holes in the assistant audio. */
  deadlineMisses: number;
  failedCalls: number;
  /** Server CPU, % of one core (null when not sampled). */
  cpuPercent: number | null;
  /** Server resident memory (null when not sampled). */
  rssBytes: number | null;
  /** How late the harness's pacing timer fired (p99): misses under a late harness are suspect. */
  pacingLateP99Ms?: number | null;
}

export interface CapacityOptions {
  measure: (concurrency: number) => Promise<CapacityPoint>;
  /** Cores the server may use: calls per core = the limit / cores. */
  cores: number;
  startConcurrency?: number;
  maxConcurrency?: number;
  /** Each step multiplies the concurrency by this (at least +1). Default 2. */
  growthFactor?: number;
  /** Default 20 ms. */
  maxAddedP99Ms?: number;
  /** Bisection steps after the first failure. Default 3. */
  refineSteps?: number;
  /**
   * Deadline misses (late chunks plus holes) tolerated per call at a level. Default 0: the first
   * miss fails. On a machine shared with other work, a few misses per call come from the
   * machine, not the load under test; a tolerance shows where misses start to grow with it.
   */
  maxMissesPerCall?: number;
}

export type CapacityLimit =
  'deadline-misses' | 'failed-calls' | 'added-latency' | 'max-concurrency';

export interface CapacityResult {
  points: CapacityPoint[];
  /** The largest concurrency that passed (0 when even the first failed). */
  maxConcurrency: number;
  /** What stopped the first failing point. */
  limit: CapacityLimit;
  callsPerCore: number;
  /** Slope of server memory against concurrency (least squares), when sampled. */
  memoryPerCallBytes: number | null;
  /** Slope of server CPU against concurrency, % of a core per call, when sampled. */
  cpuPerCallPercent: number | null;
  maxAddedP99Ms: number;
  /** Absent in result files written before the tolerance existed (it was 0). */
  maxMissesPerCall?: number;
}

export function failure(
  point: CapacityPoint,
  maxAddedP99Ms: number,
  maxMissesPerCall = 0,
): CapacityLimit | null {
  if (point.failedCalls > 0) {
    return 'failed-calls';
  }
  if (point.deadlineMisses > maxMissesPerCall * point.concurrency) {
    return 'deadline-misses';
  }
  if (point.addedP99Ms === null || point.addedP99Ms > maxAddedP99Ms) {
    return 'added-latency';
  }
  return null;
}

export async function searchCapacity(options: CapacityOptions): Promise<CapacityResult> {
  const maxAddedP99Ms = options.maxAddedP99Ms ?? 20;
  const maxMissesPerCall = options.maxMissesPerCall ?? 0;
  const maxConcurrency = options.maxConcurrency ?? 1000;
  const growth = options.growthFactor ?? 2;
  if (!(growth > 1) || !(options.cores > 0)) {
    throw new RangeError('growthFactor must be over 1 and cores positive');
  }
  const points: CapacityPoint[] = [];
  const tryAt = async (concurrency: number): Promise<CapacityLimit | null> => {
    const point = await options.measure(concurrency);
    points.push(point);
    return failure(point, maxAddedP99Ms, maxMissesPerCall);
  };
  let good = 0;
  let bad = 0;
  let limit: CapacityLimit = 'max-concurrency';
  for (let c = Math.max(1, options.startConcurrency ?? 1); c <= maxConcurrency;) {
    const failed = await tryAt(c);
    if (failed !== null) {
      bad = c;
      limit = failed;
      break;
    }
    good = c;
    if (c === maxConcurrency) {
      break;
    }
    c = Math.min(maxConcurrency, Math.max(c + 1, Math.round(c * growth)));
  }
  for (let step = 0; bad > 0 && step < (options.refineSteps ?? 3) && bad - good > 1; step++) {
    const middle = Math.floor((good + bad) / 2);
    const failed = await tryAt(middle);
    if (failed === null) {
      good = middle;
    } else {
      bad = middle;
      limit = failed;
    }
  }
  points.sort((a, b) => a.concurrency - b.concurrency);
  return {
    points,
    maxConcurrency: good,
    limit,
    callsPerCore: good / options.cores,
    memoryPerCallBytes: slope(points, (p) => p.rssBytes),
    cpuPerCallPercent: slope(points, (p) => p.cpuPercent),
    maxAddedP99Ms,
    maxMissesPerCall,
  };
}

/** Least-squares slope of y against concurrency; null with fewer than two distinct points. */
function slope(
  points: readonly CapacityPoint[],
  y: (p: CapacityPoint) => number | null,
): number | null {
  const xs: number[] = [];
  const ys: number[] = [];
  for (const point of points) {
    const value = y(point);
    if (value !== null) {
      xs.push(point.concurrency);
      ys.push(value);
    }
  }
  if (new Set(xs).size < 2) {
    return null;
  }
  const meanX = xs.reduce((a, b) => a + b, 0) / xs.length;
  const meanY = ys.reduce((a, b) => a + b, 0) / ys.length;
  let numerator = 0;
  let denominator = 0;
  for (let i = 0; i < xs.length; i++) {
    numerator += (xs[i]! - meanX) * (ys[i]! - meanY);
    denominator += (xs[i]! - meanX) ** 2;
  }
  return numerator / denominator;
}
