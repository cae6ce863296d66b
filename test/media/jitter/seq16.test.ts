import { describe, expect, it } from 'vitest';
import {
  Seq16Unwrapper,
  seq16Add,
  seq16Diff,
  seq16IsNewer,
} from '../../../src/media/jitter/seq16.js';

describe('seq16', () => {
  it('adds and compares across the 65535 → 0 wrap', () => {
    expect(seq16Add(65535, 1)).toBe(0);
    expect(seq16Add(65530, 10)).toBe(4);
    expect(seq16Add(3, -5)).toBe(65534);
    expect(seq16Diff(0, 65535)).toBe(1);
    expect(seq16Diff(65535, 0)).toBe(-1);
    expect(seq16Diff(100, 40)).toBe(60);
    expect(seq16Diff(32767, 0)).toBe(32767);
    expect(seq16Diff(32768, 0)).toBe(-32768);
    expect(seq16IsNewer(2, 65534)).toBe(true);
    expect(seq16IsNewer(65534, 2)).toBe(false);
    expect(seq16IsNewer(7, 7)).toBe(false);
  });

  it('unwraps a stream that wraps several times, with reordering around each wrap', () => {
    const unwrapper = new Seq16Unwrapper();
    expect(unwrapper.unwrap(65000)).toBe(65000);
    let extended = 65000;
    for (let i = 1; i < 200_000; i++) {
      extended++;
      expect(unwrapper.unwrap(extended & 0xffff)).toBe(extended);
    }
    // A packet from just before the last wrap arrives late; one from ahead arrives early.
    const highest = unwrapper.highestExtended;
    expect(unwrapper.unwrap((highest - 3) & 0xffff)).toBe(highest - 3);
    expect(unwrapper.unwrap((highest + 5) & 0xffff)).toBe(highest + 5);
    expect(unwrapper.highestExtended).toBe(highest + 5);
  });

  it('maps an early packet from before the first one below it', () => {
    const unwrapper = new Seq16Unwrapper();
    expect(unwrapper.unwrap(1)).toBe(1);
    expect(unwrapper.unwrap(65534)).toBe(-2);
    expect(unwrapper.unwrap(2)).toBe(2);
    unwrapper.reset();
    expect(unwrapper.unwrap(65534)).toBe(65534);
  });
});
