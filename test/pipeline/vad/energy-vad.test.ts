import { describe, expect, it } from 'vitest';
import { EnergyVad, levelDbfs, SILENCE_DBFS } from '../../../src/pipeline/vad/energy-vad.js';

const RATE_HZ = 16000;
const FRAME_SAMPLES = 320; // 20 ms

/** Deterministic uniform noise in [−1, 1). */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 31 - 1;
  };
}

function tone(frame: Int16Array, startSample: number, amplitude: number, hz = 440): Int16Array {
  for (let i = 0; i < frame.length; i++) {
    frame[i] = Math.round(amplitude * Math.sin((2 * Math.PI * hz * (startSample + i)) / RATE_HZ));
  }
  return frame;
}

/** White noise with an RMS of `dbfs` (uniform noise has RMS amplitude / √3). */
function noise(frame: Int16Array, next: () => number, dbfs: number): Int16Array {
  const amplitude = 32768 * 10 ** (dbfs / 20) * Math.sqrt(3);
  for (let i = 0; i < frame.length; i++) {
    frame[i] = Math.round(amplitude * next());
  }
  return frame;
}

describe('levelDbfs', () => {
  it('measures silence, tones and noise', () => {
    expect(levelDbfs(new Int16Array(FRAME_SAMPLES))).toBe(SILENCE_DBFS);
    expect(levelDbfs(new Int16Array(0))).toBe(SILENCE_DBFS);
    // A sine of amplitude A has RMS A/√2: −3 dB below a full-scale square wave.
    const full = tone(new Int16Array(1600), 0, 32767);
    expect(levelDbfs(full)).toBeCloseTo(-3.01, 1);
    const quiet = tone(new Int16Array(1600), 0, 32767 * 10 ** (-30 / 20));
    expect(levelDbfs(quiet)).toBeCloseTo(-33.01, 1);
    const n = noise(new Int16Array(16000), random(1), -40);
    expect(levelDbfs(n)).toBeCloseTo(-40, 0);
  });
});

describe('EnergyVad', () => {
  it('calls digital silence silence and a tone speech, with a hangover', () => {
    const vad = new EnergyVad({ sampleRateHz: RATE_HZ, hangoverMs: 100 });
    const frame = new Int16Array(FRAME_SAMPLES);
    for (let i = 0; i < 50; i++) {
      expect(vad.process(frame)).toBe(false);
    }
    expect(vad.noiseFloorDbfs).toBeLessThan(-90);
    for (let i = 0; i < 10; i++) {
      expect(vad.process(tone(frame, i * FRAME_SAMPLES, 3000))).toBe(true);
    }
    frame.fill(0);
    // 100 ms of hangover at 20 ms per frame: five frames still speech, then silence.
    const decisions = Array.from({ length: 8 }, () => vad.process(frame));
    expect(decisions).toEqual([true, true, true, true, true, false, false, false]);
  });

  it('adapts its floor to steady noise and still hears a tone above it', () => {
    const vad = new EnergyVad({ sampleRateHz: RATE_HZ });
    const next = random(7);
    const frame = new Int16Array(FRAME_SAMPLES);
    let lastDecisions: boolean[] = [];
    for (let i = 0; i < 500; i++) {
      // 10 s of white noise at −40 dBFS, louder than the initial floor.
      lastDecisions.push(vad.process(noise(frame, next, -40)));
      lastDecisions = lastDecisions.slice(-50);
    }
    expect(vad.noiseFloorDbfs).toBeGreaterThan(-44);
    expect(vad.noiseFloorDbfs).toBeLessThan(-38);
    expect(lastDecisions.every((d) => !d)).toBe(true);
    // A tone 20 dB above the noise is speech at once.
    const loud = tone(new Int16Array(FRAME_SAMPLES), 0, 32767 * 10 ** (-17 / 20));
    expect(vad.process(loud)).toBe(true);
    expect(vad.lastLevelDbfs).toBeCloseTo(-20, 0);
  });

  it('falls quickly to a quieter floor and never calls very quiet frames speech', () => {
    const vad = new EnergyVad({ sampleRateHz: RATE_HZ, initialNoiseFloorDbfs: -30 });
    const next = random(3);
    const frame = new Int16Array(160); // 10 ms frames work too
    for (let i = 0; i < 100; i++) {
      expect(vad.process(noise(frame, next, -70))).toBe(false);
    }
    expect(vad.noiseFloorDbfs).toBeLessThan(-65);
    // −60 dBFS stands 10 dB above the floor but under the −55 dBFS minimum.
    expect(vad.process(noise(frame, next, -60))).toBe(false);
    vad.reset();
    expect(vad.noiseFloorDbfs).toBe(-30);
    expect(vad.isSpeech).toBe(false);
  });

  it('rejects a bad sample rate', () => {
    expect(() => new EnergyVad({ sampleRateHz: 0 })).toThrow(RangeError);
  });
});
