import { describe, expect, it } from 'vitest';
import { Int16RingBuffer } from '../../../src/media/framing/ring-buffer.js';

function seq(from: number, length: number): Int16Array {
  return Int16Array.from({ length }, (_, i) => from + i);
}

describe('Int16RingBuffer', () => {
  it('is a FIFO across the wrap point', () => {
    const ring = new Int16RingBuffer(8);
    const out = new Int16Array(8);
    let next = 0;
    let expected = 0;
    // Writes of 5 and reads of 3 walk the indices around the buffer many times.
    for (let round = 0; round < 20; round++) {
      if (ring.free >= 5) {
        ring.write(seq(next, 5));
        next += 5;
      }
      const n = ring.read(out, 0, 3);
      expect(Array.from(out.subarray(0, n))).toEqual(Array.from(seq(expected, n)));
      expected += n;
    }
    expect(ring.length).toBe(next - expected);
  });

  it('writes a slice, peeks without consuming, discards, and reads short when empty', () => {
    const ring = new Int16RingBuffer(4);
    ring.write(seq(10, 6), 2, 3);
    const out = new Int16Array(4);
    expect(ring.peek(out)).toBe(3);
    expect(Array.from(out.subarray(0, 3))).toEqual([12, 13, 14]);
    expect(ring.discard(1)).toBe(1);
    expect(ring.read(out, 1)).toBe(2);
    expect(Array.from(out.subarray(1, 3))).toEqual([13, 14]);
    expect(ring.read(out)).toBe(0);
    expect(ring.discard(5)).toBe(0);
  });

  it('writes silence and clears', () => {
    const ring = new Int16RingBuffer(4);
    ring.write(seq(1, 2));
    ring.writeSilence(2);
    const out = new Int16Array(4);
    ring.read(out);
    expect(Array.from(out)).toEqual([1, 2, 0, 0]);
    ring.write(seq(5, 3));
    ring.clear();
    expect(ring.length).toBe(0);
    expect(ring.free).toBe(4);
  });

  it('refuses to overflow or to take ranges outside the array', () => {
    const ring = new Int16RingBuffer(4);
    ring.write(seq(0, 3));
    expect(() => ring.write(seq(0, 2))).toThrow(/overflow/);
    expect(ring.length).toBe(3);
    expect(() => ring.writeSilence(2)).toThrow(RangeError);
    expect(() => ring.write(seq(0, 2), 1, 2)).toThrow(RangeError);
    expect(() => ring.read(new Int16Array(2), 1, 2)).toThrow(RangeError);
    expect(() => new Int16RingBuffer(0)).toThrow(RangeError);
  });
});
