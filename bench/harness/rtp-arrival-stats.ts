/**
 * Arrival statistics of one received RTP stream, kept per packet without allocating: the RFC 3550
 * interarrival jitter estimate (§6.4.1, computed as in its appendix A.8) and a histogram of the
 * gaps between consecutive arrivals. Arrival times are the receiver's (the harness's event loop
 * when the datagram is handled), so a loaded receiver adds its own lateness to both figures.
 */
export interface RtpArrivalSummary {
  packets: number;
  /** The jitter estimate after the last packet, in ms (what an RTCP receiver report carries). */
  jitterMs: number;
  /** The largest the estimate got during the stream, in ms. */
  maxJitterMs: number;
  /** Gaps between consecutive arrivals: quantiles rounded down to 0.5 ms, the maximum exact. */
  gapP50Ms: number | null;
  gapP99Ms: number | null;
  gapMaxMs: number | null;
  /** Gaps longer than two packet times (more than one packet's worth late). */
  gapsOverTwoPackets: number;
}

/** Histogram resolution and range: 0.5 ms bins up to 1 s; longer gaps land in the last bin. */
const GAP_BIN_MS = 0.5;
const GAP_BINS = 2000;

export class RtpArrivalStats {
  readonly #clockRateHz: number;
  readonly #packetMs: number;
  readonly #gapBins = new Uint32Array(GAP_BINS);
  #packets = 0;
  #gaps = 0;
  #gapMaxMs = 0;
  #gapsOverTwoPackets = 0;
  #lastArrivalMs = 0;
  #lastTimestamp = 0;
  #lastSsrc = -1;
  /** J of RFC 3550 in timestamp units. */
  #jitter = 0;
  #maxJitter = 0;

  /** `packetMs`: the stream's nominal packet time (20 ms for the G.711 calls here). */
  constructor(clockRateHz: number, packetMs = 20) {
    if (!(clockRateHz > 0) || !(packetMs > 0)) {
      throw new RangeError('clockRateHz and packetMs must be positive');
    }
    this.#clockRateHz = clockRateHz;
    this.#packetMs = packetMs;
  }

  /** One packet arrived at `arrivalMs` (a monotonic clock) carrying RTP `timestamp` and `ssrc`. */
  record(arrivalMs: number, timestamp: number, ssrc: number): void {
    this.#packets++;
    if (ssrc === this.#lastSsrc) {
      const gapMs = arrivalMs - this.#lastArrivalMs;
      this.#gaps++;
      this.#gapBins[Math.min(GAP_BINS - 1, Math.max(0, Math.floor(gapMs / GAP_BIN_MS)))]!++;
      this.#gapMaxMs = Math.max(this.#gapMaxMs, gapMs);
      if (gapMs > 2 * this.#packetMs) {
        this.#gapsOverTwoPackets++;
      }
      // D(i-1, i) = (Rj − Ri) − (Sj − Si); the timestamp difference is taken modulo 2^32, signed.
      const sentUnits = (timestamp - this.#lastTimestamp) | 0;
      const arrivedUnits = (gapMs * this.#clockRateHz) / 1000;
      const d = Math.abs(arrivedUnits - sentUnits);
      this.#jitter += (d - this.#jitter) / 16;
      this.#maxJitter = Math.max(this.#maxJitter, this.#jitter);
    }
    // A new SSRC is a new stream: its first packet has nothing to be compared with.
    this.#lastSsrc = ssrc;
    this.#lastArrivalMs = arrivalMs;
    this.#lastTimestamp = timestamp;
  }

  summary(): RtpArrivalSummary {
    const toMs = (units: number): number => (units / this.#clockRateHz) * 1000;
    return {
      packets: this.#packets,
      jitterMs: toMs(this.#jitter),
      maxJitterMs: toMs(this.#maxJitter),
      gapP50Ms: this.#gapQuantile(0.5),
      gapP99Ms: this.#gapQuantile(0.99),
      gapMaxMs: this.#gaps === 0 ? null : this.#gapMaxMs,
      gapsOverTwoPackets: this.#gapsOverTwoPackets,
    };
  }

  /** The lower edge of the bin holding the q-quantile gap. */
  #gapQuantile(q: number): number | null {
    if (this.#gaps === 0) {
      return null;
    }
    const rank = Math.max(1, Math.ceil(q * this.#gaps));
    let seen = 0;
    for (let bin = 0; bin < GAP_BINS; bin++) {
      seen += this.#gapBins[bin]!;
      if (seen >= rank) {
        return bin * GAP_BIN_MS;
      }
    }
    return this.#gapMaxMs;
  }
}
