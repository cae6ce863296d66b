/** Transit-time changes beyond this are a timestamp discontinuity (a new source), not jitter. */
const MAX_TRANSIT_STEP_MS = 10_000;
const JITTER = 0;
const PREVIOUS_ARRIVAL = 1;
const PREVIOUS_TIMESTAMP = 2;

/**
 * The RFC 3550 §6.4.1 interarrival jitter estimator: for consecutive arrivals i−1 and i,
 * D = (R_i − R_{i−1}) − (S_i − S_{i−1}) and J += (|D| − J) / 16, with arrival times R and RTP
 * timestamps S both converted to milliseconds. RTP timestamps wrap at 2^32.
 *
 * The state is held in a Float64Array rather than in fields: a class field that starts out
 * undefined and then holds a double (or a timestamp above 2^31) is stored boxed, and every
 * update would allocate.
 */
export class InterarrivalJitter {
  readonly clockRateHz: number;
  private readonly state: Float64Array;
  private hasPrevious: boolean;

  constructor(clockRateHz: number) {
    if (!(clockRateHz > 0)) {
      throw new RangeError(`clock rate must be positive, got ${clockRateHz}`);
    }
    this.clockRateHz = clockRateHz;
    this.state = new Float64Array(3);
    this.hasPrevious = false;
  }

  /** The current estimate, in milliseconds. */
  get jitterMs(): number {
    return this.state[JITTER]!;
  }

  /** Feeds one arrival; read the updated estimate from `jitterMs`. */
  update(rtpTimestamp: number, arrivalMs: number): void {
    const state = this.state;
    const timestamp = rtpTimestamp >>> 0;
    if (this.hasPrevious) {
      const rtpStep = (timestamp - state[PREVIOUS_TIMESTAMP]!) | 0;
      const d = arrivalMs - state[PREVIOUS_ARRIVAL]! - (rtpStep * 1000) / this.clockRateHz;
      const magnitude = d < 0 ? -d : d;
      if (magnitude < MAX_TRANSIT_STEP_MS) {
        state[JITTER] = state[JITTER]! + (magnitude - state[JITTER]!) / 16;
      }
    }
    this.hasPrevious = true;
    state[PREVIOUS_ARRIVAL] = arrivalMs;
    state[PREVIOUS_TIMESTAMP] = timestamp;
  }

  reset(): void {
    this.state.fill(0);
    this.hasPrevious = false;
  }
}
