/**
 * Arithmetic on 16-bit RTP sequence numbers, which wrap from 65535 to 0 (RFC 3550 §A.1), and an
 * unwrapper that extends them to an ever-increasing count.
 */
export const SEQ16_MODULUS = 0x10000;

/** seq + n, wrapped into 0 … 65535. */
export function seq16Add(seq: number, n: number): number {
  return (seq + n) & 0xffff;
}

/**
 * The signed distance from b to a, −32768 … 32767: positive when a is newer. seq16Diff(0, 65535)
 * is 1; seq16Diff(65535, 0) is −1.
 */
export function seq16Diff(a: number, b: number): number {
  return ((a - b) << 16) >> 16;
}

/** True when a comes after b (within half the sequence space). */
export function seq16IsNewer(a: number, b: number): boolean {
  return seq16Diff(a, b) > 0;
}

/**
 * Maps 16-bit sequence numbers to extended ones that keep counting past 65535. Each number is
 * placed within ±32768 of the highest seen so far, so reordered packets from before a wrap map
 * below it and packets after a wrap map above it. The first number maps to itself.
 */
export class Seq16Unwrapper {
  private highest: number;
  private started: boolean;

  constructor() {
    this.highest = 0;
    this.started = false;
  }

  /** The highest extended sequence number returned so far (0 before the first). */
  get highestExtended(): number {
    return this.highest;
  }

  unwrap(seq: number): number {
    if (!this.started) {
      this.started = true;
      this.highest = seq;
      return seq;
    }
    const highestLow = this.highest - Math.floor(this.highest / SEQ16_MODULUS) * SEQ16_MODULUS;
    const extended = this.highest + seq16Diff(seq, highestLow);
    if (extended > this.highest) {
      this.highest = extended;
    }
    return extended;
  }

  reset(): void {
    this.highest = 0;
    this.started = false;
  }
}
