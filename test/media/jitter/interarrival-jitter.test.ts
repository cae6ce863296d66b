import { describe, expect, it } from 'vitest';
import { InterarrivalJitter } from '../../../src/media/jitter/interarrival-jitter.js';

describe('InterarrivalJitter (RFC 3550 §6.4.1)', () => {
  it('stays at zero for a constant transit time, across the 2^32 timestamp wrap', () => {
    const jitter = new InterarrivalJitter(8000);
    let timestamp = 0xffffffff - 160 * 5;
    for (let i = 0; i < 20; i++) {
      jitter.update(timestamp >>> 0, 1000 + 20 * i);
      expect(jitter.jitterMs).toBe(0);
      timestamp += 160;
    }
  });

  it('follows J += (|D| − J) / 16', () => {
    const jitter = new InterarrivalJitter(16000);
    // Transit alternates between 0 and 10 ms, so |D| is 10 ms for every packet after the first.
    jitter.update(0, 0);
    let expected = 0;
    for (let i = 1; i <= 40; i++) {
      jitter.update(320 * i, 20 * i + (i % 2 ? 10 : 0));
      expected += (10 - expected) / 16;
      expect(jitter.jitterMs).toBeCloseTo(expected, 12);
    }
    expect(jitter.jitterMs).toBeCloseTo(10 * (1 - (15 / 16) ** 40), 12);
  });

  it('ignores a timestamp discontinuity and starts over on reset', () => {
    const jitter = new InterarrivalJitter(8000);
    jitter.update(0, 0);
    jitter.update(160, 25);
    const before = jitter.jitterMs;
    expect(before).toBeCloseTo(5 / 16, 12);
    jitter.update(160 + 8000 * 3600, 45); // a new source an hour ahead
    expect(jitter.jitterMs).toBe(before);
    jitter.reset();
    expect(jitter.jitterMs).toBe(0);
    expect(() => new InterarrivalJitter(0)).toThrow(RangeError);
  });
});
