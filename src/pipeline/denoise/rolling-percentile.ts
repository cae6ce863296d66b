/**
 * Rolling percentiles of quantised values (bucket indices 0 … bucketCount−1) over the last
 * `capacity` pushes, for several channels at once (one per frequency band, say) and several
 * percentiles per channel.
 *
 * Each channel keeps a histogram of the bucket indices in its window and a ring of the indices
 * themselves (to know what leaves the window). Each tracked percentile is a cursor into the
 * histogram plus the count of values below it; a push moves every cursor by the few buckets the
 * rank shifted, so a push costs O(channels × percentiles) amortised, not a sort. The nearest-rank
 * definition is used: the p-th percentile of n values is the smallest bucket b such that at least
 * ceil(p/100 · n) values are ≤ b. Nothing is allocated after construction.
 */
export class RollingPercentileBank {
  readonly channelCount: number;
  readonly capacity: number;
  readonly bucketCount: number;
  readonly percentiles: readonly number[];
  /** Ring of pushed rows: capacity × channelCount bucket indices. */
  private readonly ring: Uint8Array;
  /** channelCount × bucketCount histogram counts. */
  private readonly counts: Int32Array;
  /** channelCount × percentiles cursor bucket and the number of values in buckets below it. */
  private readonly cursor: Int32Array;
  private readonly below: Int32Array;
  private readonly fractions: Float64Array;
  private writeIndex = 0;
  private filled = 0;

  constructor(
    channelCount: number,
    capacity: number,
    percentiles: readonly number[],
    bucketCount = 256,
  ) {
    if (!Number.isInteger(channelCount) || channelCount < 1) {
      throw new RangeError(`channel count must be a positive integer, got ${channelCount}`);
    }
    if (!Number.isInteger(capacity) || capacity < 1) {
      throw new RangeError(`capacity must be a positive integer, got ${capacity}`);
    }
    if (!Number.isInteger(bucketCount) || bucketCount < 2 || bucketCount > 256) {
      throw new RangeError(`bucket count must be an integer from 2 to 256, got ${bucketCount}`);
    }
    if (percentiles.length === 0 || percentiles.some((p) => !(p > 0 && p <= 100))) {
      throw new RangeError(`percentiles must be in (0, 100], got ${percentiles.join(', ')}`);
    }
    this.channelCount = channelCount;
    this.capacity = capacity;
    this.bucketCount = bucketCount;
    this.percentiles = [...percentiles];
    this.fractions = Float64Array.from(percentiles, (p) => p / 100);
    this.ring = new Uint8Array(capacity * channelCount);
    this.counts = new Int32Array(channelCount * bucketCount);
    this.cursor = new Int32Array(channelCount * percentiles.length);
    this.below = new Int32Array(channelCount * percentiles.length);
  }

  /** Values currently in the window (the same for every channel). */
  get size(): number {
    return this.filled;
  }

  /**
   * Adds one value per channel, values[c] for c < channelCount (bucket indices, clamped into
   * range), dropping each channel's oldest value once the window is full.
   */
  push(values: Uint8Array): void {
    const channels = this.channelCount;
    const buckets = this.bucketCount;
    const trackers = this.fractions.length;
    const full = this.filled === this.capacity;
    const rowStart = this.writeIndex * channels;
    const n = full ? this.filled : this.filled + 1;
    for (let c = 0; c < channels; c++) {
      const raw = values[c]!;
      const added = raw < buckets ? raw : buckets - 1;
      const removed = full ? this.ring[rowStart + c]! : -1;
      this.ring[rowStart + c] = added;
      const histogram = c * buckets;
      this.counts[histogram + added]!++;
      if (removed >= 0) {
        this.counts[histogram + removed]!--;
      }
      for (let t = 0; t < trackers; t++) {
        const slot = c * trackers + t;
        let bucket = this.cursor[slot]!;
        let below = this.below[slot]!;
        if (added < bucket) {
          below++;
        }
        if (removed >= 0 && removed < bucket) {
          below--;
        }
        const rank = Math.max(1, Math.ceil(this.fractions[t]! * n - 1e-9));
        while (below >= rank) {
          bucket--;
          below -= this.counts[histogram + bucket]!;
        }
        while (below + this.counts[histogram + bucket]! < rank) {
          below += this.counts[histogram + bucket]!;
          bucket++;
        }
        this.cursor[slot] = bucket;
        this.below[slot] = below;
      }
    }
    this.writeIndex = this.writeIndex + 1 === this.capacity ? 0 : this.writeIndex + 1;
    this.filled = n;
  }

  /** The bucket index of percentile number `tracker` (its index in `percentiles`) of `channel`. */
  bucket(channel: number, tracker: number): number {
    return this.cursor[channel * this.fractions.length + tracker]!;
  }

  /** Empties the window. */
  reset(): void {
    this.ring.fill(0);
    this.counts.fill(0);
    this.cursor.fill(0);
    this.below.fill(0);
    this.writeIndex = 0;
    this.filled = 0;
  }
}
