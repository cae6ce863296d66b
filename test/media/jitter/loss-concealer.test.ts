import { describe, expect, it } from 'vitest';
import { LossConcealer } from '../../../src/media/jitter/loss-concealer.js';

describe('LossConcealer', () => {
  it('repeats the last frame with a linear fade over fadeFrames, then gives silence', () => {
    const concealer = new LossConcealer(4, 2);
    const good = Int16Array.from([0, 0, 800, 800, 800, 800]);
    const out = new Int16Array(4);
    concealer.play(good, 2, out);
    expect(Array.from(out)).toEqual([800, 800, 800, 800]);
    expect(concealer.faded).toBe(false);
    concealer.conceal(out);
    expect(Array.from(out)).toEqual([700, 600, 500, 400]);
    concealer.conceal(out);
    expect(Array.from(out)).toEqual([300, 200, 100, 0]);
    expect(concealer.faded).toBe(true);
    concealer.conceal(out);
    expect(Array.from(out)).toEqual([0, 0, 0, 0]);
    expect(concealer.concealedRun).toBe(3);
    concealer.play(good, 2, out);
    expect(concealer.concealedRun).toBe(0);
    concealer.conceal(out);
    expect(out[0]).toBe(700);
  });

  it('conceals with silence before any good frame and after reset', () => {
    const concealer = new LossConcealer(3, 3);
    const out = Int16Array.from([5, 5, 5]);
    concealer.conceal(out);
    expect(Array.from(out)).toEqual([0, 0, 0]);
    concealer.play(Int16Array.from([9, 9, 9]), 0, out);
    concealer.reset();
    concealer.conceal(out);
    expect(Array.from(out)).toEqual([0, 0, 0]);
    expect(() => new LossConcealer(3, -1)).toThrow(RangeError);
  });
});
