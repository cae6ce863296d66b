import { checkRange } from '../check-range.js';

/**
 * A fixed-capacity FIFO of PCM16 samples backed by one preallocated Int16Array. Writes and reads
 * copy sample by sample (no subarray views), so nothing is allocated after construction.
 */
export class Int16RingBuffer {
  readonly capacity: number;
  private readonly data: Int16Array;
  /** Index of the oldest sample. */
  private readIndex: number;
  /** Number of samples held. */
  private count: number;

  constructor(capacity: number) {
    if (!Number.isInteger(capacity) || capacity <= 0) {
      throw new RangeError(`ring buffer capacity must be a positive integer, got ${capacity}`);
    }
    this.capacity = capacity;
    this.data = new Int16Array(capacity);
    this.readIndex = 0;
    this.count = 0;
  }

  /** Samples held. */
  get length(): number {
    return this.count;
  }

  /** Room left, in samples. */
  get free(): number {
    return this.capacity - this.count;
  }

  clear(): void {
    this.readIndex = 0;
    this.count = 0;
  }

  /**
   * Appends `length` samples of `source` starting at `offset`. Throws a RangeError when they do not
   * fit: size the buffer for the worst case, or check `free` first.
   */
  write(source: Int16Array, offset = 0, length = source.length - offset): void {
    checkRange(source.length, offset, length);
    if (length > this.capacity - this.count) {
      throw new RangeError(`ring buffer overflow: ${length} samples, ${this.free} free`);
    }
    const data = this.data;
    const capacity = this.capacity;
    let writeIndex = this.readIndex + this.count;
    if (writeIndex >= capacity) {
      writeIndex -= capacity;
    }
    for (let i = 0; i < length; i++) {
      data[writeIndex] = source[offset + i]!;
      writeIndex = writeIndex + 1 === capacity ? 0 : writeIndex + 1;
    }
    this.count += length;
  }

  /** Appends `length` zero samples (silence). */
  writeSilence(length: number): void {
    if (!Number.isInteger(length) || length < 0 || length > this.capacity - this.count) {
      throw new RangeError(`cannot write ${length} samples of silence, ${this.free} free`);
    }
    const capacity = this.capacity;
    let writeIndex = this.readIndex + this.count;
    if (writeIndex >= capacity) {
      writeIndex -= capacity;
    }
    for (let i = 0; i < length; i++) {
      this.data[writeIndex] = 0;
      writeIndex = writeIndex + 1 === capacity ? 0 : writeIndex + 1;
    }
    this.count += length;
  }

  /**
   * Moves up to `length` of the oldest samples into `target` at `offset`; returns how many were
   * moved (fewer than asked when the buffer holds fewer).
   */
  read(target: Int16Array, offset = 0, length = target.length - offset): number {
    const copied = this.peek(target, offset, length);
    this.discard(copied);
    return copied;
  }

  /** Like read(), but leaves the samples in the buffer. */
  peek(target: Int16Array, offset = 0, length = target.length - offset): number {
    checkRange(target.length, offset, length);
    const n = length < this.count ? length : this.count;
    const data = this.data;
    const capacity = this.capacity;
    let readIndex = this.readIndex;
    for (let i = 0; i < n; i++) {
      target[offset + i] = data[readIndex]!;
      readIndex = readIndex + 1 === capacity ? 0 : readIndex + 1;
    }
    return n;
  }

  /** Drops up to `length` of the oldest samples; returns how many were dropped. */
  discard(length: number): number {
    const n = length < this.count ? (length > 0 ? length : 0) : this.count;
    this.readIndex += n;
    if (this.readIndex >= this.capacity) {
      this.readIndex -= this.capacity;
    }
    this.count -= n;
    return n;
  }
}
