import { describe, expect, it } from 'vitest';
import { OfficeAmbience } from '../../../src/pipeline/playout/office-ambience.js';
import { levelDbfs } from '../../../src/pipeline/vad/energy-vad.js';

function render(rateHz: number, seconds: number, seed?: number): Int16Array {
  const ambience = new OfficeAmbience(rateHz, seed);
  const out = new Int16Array(rateHz * seconds);
  const frame = rateHz / 50;
  for (let at = 0; at < out.length; at += frame) {
    ambience.mixInto(out.subarray(at, at + frame));
  }
  return out;
}

describe('OfficeAmbience', () => {
  it('is a low bed around −40 dBFS at every call rate, with clicks above it', () => {
    for (const rate of [8000, 16000, 24000, 48000]) {
      const out = render(rate, 20);
      const level = levelDbfs(out);
      expect(level).toBeGreaterThan(-44);
      expect(level).toBeLessThan(-37);
      let peak = 0;
      for (const v of out) {
        peak = Math.max(peak, Math.abs(v));
      }
      // Keystrokes stand out of the bed (about −22 dBFS peaks) but stay far from clipping.
      expect(peak).toBeGreaterThan(1500);
      expect(peak).toBeLessThan(6000);
      // Every second holds some sound: the bed never stops.
      for (let s = 0; s < 20; s++) {
        expect(levelDbfs(out.subarray(s * rate, (s + 1) * rate))).toBeGreaterThan(-46);
      }
    }
  });

  it('is deterministic for a seed and differs between seeds', () => {
    expect(render(16000, 2)).toEqual(render(16000, 2));
    expect(render(16000, 2, 7)).not.toEqual(render(16000, 2, 8));
  });

  it('mixes into what is there, saturating', () => {
    const ambience = new OfficeAmbience(16000);
    const out = new Int16Array(320).fill(32767);
    ambience.mixInto(out);
    expect(Math.min(...out)).toBeGreaterThan(30000);
    expect(Math.max(...out)).toBe(32767);
  });

  it('rejects rates outside 8–48 kHz', () => {
    expect(() => new OfficeAmbience(4000)).toThrow(RangeError);
  });
});
