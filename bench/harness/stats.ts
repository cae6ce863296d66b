/** Percentiles and summaries of latency samples (ms). */
export interface Distribution {
  count: number;
  min: number;
  mean: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
}

/** The q-quantile (0–1) of sorted values, linearly interpolated between ranks; NaN when empty. */
export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) {
    return Number.NaN;
  }
  const position = (sorted.length - 1) * Math.min(1, Math.max(0, q));
  const below = Math.floor(position);
  const above = Math.min(sorted.length - 1, below + 1);
  const fraction = position - below;
  return sorted[below]! + (sorted[above]! - sorted[below]!) * fraction;
}

/** Summary of the finite values; null when there are none. */
export function distribution(values: readonly (number | null)[]): Distribution | null {
  const sorted = values
    .filter((v): v is number => v !== null && Number.isFinite(v))
    .sort((a, b) => a - b);
  if (sorted.length === 0) {
    return null;
  }
  const sum = sorted.reduce((total, v) => total + v, 0);
  return {
    count: sorted.length,
    min: sorted[0]!,
    mean: sum / sorted.length,
    p50: quantile(sorted, 0.5),
    p95: quantile(sorted, 0.95),
    p99: quantile(sorted, 0.99),
    max: sorted[sorted.length - 1]!,
  };
}
