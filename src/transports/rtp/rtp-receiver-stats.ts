/**
 * Reception statistics of one source as RFC 3550 Appendix A.1, A.3 and A.8 keep them: the
 * extended highest sequence number, packets expected and received, loss (cumulative and the
 * fraction since the last report) and interarrival jitter in timestamp units. These fill the
 * report blocks of RTCP SR/RR packets.
 */

const MAX_DROPOUT = 3000;
const MAX_MISORDER = 100;
const SEQ_MOD = 0x10000;

export interface RtcpReportFigures {
  /** Fraction lost since the previous report, in 1/256 (0–255). */
  fractionLost: number;
  /** Cumulative packets lost (may be negative with duplicates), clamped to 24 bits. */
  cumulativeLost: number;
  extendedHighestSequence: number;
  /** Interarrival jitter in timestamp units. */
  jitter: number;
}

export class RtpReceiverStats {
  private started = false;
  private maxSeq = 0;
  private cycles = 0;
  private baseSeq = 0;
  private badSeq = SEQ_MOD + 1;
  private receivedCount = 0;
  private expectedPrior = 0;
  private receivedPrior = 0;
  /** [0] jitter, [1] last transit: doubles kept in a typed array so updates never box. */
  private readonly state = new Float64Array(2);
  private hasTransit = false;

  constructor(private clockRateHz: number) {}

  get received(): number {
    return this.receivedCount;
  }

  get extendedHighestSequence(): number {
    return this.cycles + this.maxSeq;
  }

  get expected(): number {
    return this.started ? this.extendedHighestSequence - this.baseSeq + 1 : 0;
  }

  get lost(): number {
    return this.expected - this.receivedCount;
  }

  /** Jitter in timestamp units. */
  get jitter(): number {
    return this.state[0]!;
  }

  get jitterMs(): number {
    return (this.state[0]! * 1000) / this.clockRateHz;
  }

  /**
   * Records one packet (A.1 update_seq). Returns false for a packet from a sequence jump the
   * algorithm does not yet believe (a second consecutive one restarts the count).
   */
  update(
    sequenceNumber: number,
    timestamp: number,
    arrivalMs: number,
    forJitter: boolean,
  ): boolean {
    if (!this.started) {
      this.restart(sequenceNumber);
      this.started = true;
    } else {
      const delta = (sequenceNumber - this.maxSeq + SEQ_MOD) % SEQ_MOD;
      if (delta < MAX_DROPOUT) {
        if (sequenceNumber < this.maxSeq) {
          this.cycles += SEQ_MOD;
        }
        this.maxSeq = sequenceNumber;
      } else if (delta <= SEQ_MOD - MAX_MISORDER) {
        if (sequenceNumber === this.badSeq) {
          // Two in a row: the source restarted its sequence (A.1).
          this.restart(sequenceNumber);
          this.hasTransit = false;
        } else {
          this.badSeq = (sequenceNumber + 1) % SEQ_MOD;
          return false;
        }
      }
      // Otherwise a duplicate or reordered packet: counted as received, as A.1 does.
    }
    this.receivedCount++;
    if (forJitter) {
      const arrival = (arrivalMs * this.clockRateHz) / 1000;
      const transit = arrival - timestamp;
      if (this.hasTransit) {
        let d = transit - this.state[1]!;
        if (d < 0) {
          d = -d;
        }
        // RFC 3550 A.8 with wrap: a 32-bit timestamp jump is not jitter.
        if (d < 2 ** 31) {
          this.state[0] = this.state[0]! + (d - this.state[0]!) / 16;
        }
      }
      this.state[1] = transit;
      this.hasTransit = true;
    }
    return true;
  }

  /** Forgets the stream (a new SSRC): the next packet starts the counts again. */
  reset(): void {
    this.started = false;
    this.hasTransit = false;
    this.state.fill(0);
    this.receivedCount = 0;
    this.expectedPrior = 0;
    this.receivedPrior = 0;
  }

  /**
   * The codec changed to one of another RTP clock (a re-INVITE): the jitter, kept in timestamp
   * units, starts again; the sequence counts go on (the stream and its SSRC do).
   */
  setClockRate(clockRateHz: number): void {
    if (clockRateHz !== this.clockRateHz) {
      this.clockRateHz = clockRateHz;
      this.hasTransit = false;
      this.state.fill(0);
    }
  }

  /** The figures for one report block; moves the "since last report" mark (A.3). */
  takeReport(): RtcpReportFigures {
    const expected = this.expected;
    const expectedInterval = expected - this.expectedPrior;
    const receivedInterval = this.receivedCount - this.receivedPrior;
    this.expectedPrior = expected;
    this.receivedPrior = this.receivedCount;
    const lostInterval = expectedInterval - receivedInterval;
    const fractionLost =
      expectedInterval === 0 || lostInterval <= 0
        ? 0
        : Math.min(255, Math.floor((lostInterval * 256) / expectedInterval));
    return {
      fractionLost,
      cumulativeLost: Math.max(-0x800000, Math.min(0x7fffff, this.lost)),
      extendedHighestSequence: this.extendedHighestSequence >>> 0,
      jitter: Math.floor(this.state[0]!) >>> 0,
    };
  }

  private restart(sequenceNumber: number): void {
    this.baseSeq = sequenceNumber;
    this.maxSeq = sequenceNumber;
    this.badSeq = SEQ_MOD + 1;
    this.cycles = 0;
    this.receivedCount = 0;
    this.expectedPrior = 0;
    this.receivedPrior = 0;
  }
}
