import { describe, expect, it } from 'vitest';
import {
  createAudioFrame,
  durationMsOf,
  isSupportedSampleRate,
  samplesPerFrame,
  type FrameDurationMs,
} from '../../src/media/audio-frame.js';

describe('audio frames', () => {
  it('sizes 10 and 20 ms frames at every supported rate', () => {
    const expected: Record<number, [number, number]> = {
      8000: [80, 160],
      12000: [120, 240],
      16000: [160, 320],
      24000: [240, 480],
      44100: [441, 882],
      48000: [480, 960],
    };
    for (const [rate, [ten, twenty]] of Object.entries(expected)) {
      expect(isSupportedSampleRate(Number(rate))).toBe(true);
      expect(samplesPerFrame(Number(rate), 10)).toBe(ten);
      expect(samplesPerFrame(Number(rate), 20)).toBe(twenty);
      expect(durationMsOf(twenty, Number(rate))).toBe(20);
    }
    expect(isSupportedSampleRate(22050)).toBe(false);
  });

  it('rejects durations and rates that do not give whole frames', () => {
    expect(() => samplesPerFrame(11025, 10)).toThrow(RangeError);
    expect(() => samplesPerFrame(16000, 30 as FrameDurationMs)).toThrow(RangeError);
    expect(() => samplesPerFrame(0, 20)).toThrow(RangeError);
  });

  it('creates zeroed frames with every field set', () => {
    const frame = createAudioFrame(16000, 20, 40);
    expect(frame.samples).toEqual(new Int16Array(320));
    expect(frame.sampleRateHz).toBe(16000);
    expect(frame.ptsMs).toBe(40);
    expect(Object.keys(frame)).toEqual(['samples', 'sampleRateHz', 'ptsMs']);
  });
});
