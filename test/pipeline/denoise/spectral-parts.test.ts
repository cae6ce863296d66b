import { describe, expect, it } from 'vitest';
import {
  makeNoise,
  normalize,
  loadFixture,
  seededRandom,
  toPcm16,
} from '../../../bench/denoise/signals.js';
import { RealFft } from '../../../src/pipeline/denoise/fft.js';
import { MediaDetector } from '../../../src/pipeline/denoise/media-detector.js';
import { RollingPercentileBank } from '../../../src/pipeline/denoise/rolling-percentile.js';
import { OverlapAddStft } from '../../../src/pipeline/denoise/stft.js';
import { FourierDenoiser } from '../../../src/pipeline/denoise/fourier-denoiser.js';

describe('RealFft', () => {
  it.each([4, 8, 64, 512])('matches a direct DFT and inverts (size %i)', (size) => {
    const random = seededRandom(size);
    const x = Float64Array.from({ length: size }, () => random() * 2 - 1);
    const fft = new RealFft(size);
    const re = new Float64Array(fft.binCount);
    const im = new Float64Array(fft.binCount);
    fft.forward(x, re, im);
    for (let k = 0; k <= size / 2; k++) {
      let r = 0;
      let i = 0;
      for (let n = 0; n < size; n++) {
        r += x[n]! * Math.cos((2 * Math.PI * k * n) / size);
        i -= x[n]! * Math.sin((2 * Math.PI * k * n) / size);
      }
      expect(re[k]).toBeCloseTo(r, 9);
      expect(im[k]).toBeCloseTo(i, 9);
    }
    const back = new Float64Array(size);
    fft.inverse(re, im, back);
    back.forEach((v, n) => expect(v).toBeCloseTo(x[n]!, 12));
  });

  it('rejects sizes that are not powers of two', () => {
    for (const size of [0, 2, 6, 100, 513]) {
      expect(() => new RealFft(size)).toThrow(RangeError);
    }
  });
});

describe('OverlapAddStft', () => {
  it('resynthesises an unmodified spectrum exactly, one hop late', () => {
    for (const hop of [80, 160, 441, 480]) {
      const stft = new OverlapAddStft(hop);
      expect(stft.windowLength).toBe(2 * hop);
      const random = seededRandom(hop);
      const input = Int16Array.from(
        { length: hop * 50 },
        () => Math.round(60000 * random()) - 30000,
      );
      const output = new Int16Array(input.length);
      for (let offset = 0; offset < input.length; offset += hop) {
        stft.analyze(input, offset);
        stft.synthesize(output, offset);
      }
      expect(output.subarray(hop)).toEqual(input.subarray(0, input.length - hop));
    }
  });
});

describe('RollingPercentileBank', () => {
  it('agrees with sorting the window (nearest rank) at every push', () => {
    const random = seededRandom(9);
    const percentiles = [1, 10, 50, 85, 99, 100];
    const bank = new RollingPercentileBank(3, 37, percentiles);
    const history: number[][] = [[], [], []];
    const row = new Uint8Array(3);
    for (let step = 0; step < 400; step++) {
      for (let c = 0; c < 3; c++) {
        // A drifting level with jumps, as band levels do.
        row[c] = Math.min(255, Math.floor(random() * 40 + (step % 150) + c * 30));
        history[c]!.push(row[c]!);
        if (history[c]!.length > 37) {
          history[c]!.shift();
        }
      }
      bank.push(row);
      expect(bank.size).toBe(Math.min(step + 1, 37));
      for (let c = 0; c < 3; c++) {
        const sorted = [...history[c]!].sort((a, b) => a - b);
        percentiles.forEach((p, t) => {
          const rank = Math.max(1, Math.ceil((p / 100) * sorted.length - 1e-9));
          expect(bank.bucket(c, t)).toBe(sorted[rank - 1]);
        });
      }
    }
  });

  it('rejects bad shapes', () => {
    expect(() => new RollingPercentileBank(0, 10, [50])).toThrow(RangeError);
    expect(() => new RollingPercentileBank(1, 0, [50])).toThrow(RangeError);
    expect(() => new RollingPercentileBank(1, 10, [])).toThrow(RangeError);
    expect(() => new RollingPercentileBank(1, 10, [0])).toThrow(RangeError);
  });
});

describe('media detection', () => {
  function detectedShare(samples: Float64Array, mediaDetectionEnabled = true): number {
    const input = toPcm16(samples);
    const denoiser = new FourierDenoiser({
      sampleRateHz: 16000,
      enabled: true,
      mediaDetectionEnabled,
    });
    const frame = new Int16Array(320);
    let on = 0;
    let frames = 0;
    for (let offset = 0; offset + 320 <= input.length; offset += 320) {
      denoiser.process(input.subarray(offset, offset + 320), frame);
      if (offset >= 16000 * 4) {
        frames++;
        on += denoiser.mediaDetected ? 1 : 0;
      }
    }
    return on / frames;
  }
  const level = 32768 * Math.pow(10, -30 / 20);

  it('switches on for a steady music bed and stays off for noise and for a talker', () => {
    const length = 16000 * 10;
    expect(detectedShare(normalize(makeNoise('music', length, 16000, 1), level))).toBeGreaterThan(
      0.9,
    );
    expect(detectedShare(normalize(makeNoise('music', length, 16000, 1), level), false)).toBe(0);
    for (const kind of ['white', 'pink'] as const) {
      expect(detectedShare(normalize(makeNoise(kind, length, 16000, 2), level))).toBe(0);
    }
    const speech = loadFixture('clean-speech-16k.wav').samples;
    const talk = Float64Array.from({ length }, (_, i) => speech[i % speech.length]!);
    expect(detectedShare(talk)).toBe(0);
  });

  it('needs a sustained level and holds its state', () => {
    const detector = new MediaDetector({ hopMs: 10 });
    const feed = (levelDb: number, flux: number) => {
      detector.features[0] = levelDb;
      detector.features[1] = flux;
      detector.update();
    };
    for (let i = 0; i < 500; i++) {
      feed(-70, 0.05); // steady but too quiet
    }
    expect(detector.detected).toBe(false);
    for (let i = 0; i < 299; i++) {
      feed(-30, 0.05);
    }
    expect(detector.detected).toBe(true);
    for (let i = 0; i < 250; i++) {
      feed(-30, 0.5); // noise-like: off only after the 3 s hold
    }
    expect(detector.detected).toBe(true);
    for (let i = 0; i < 400; i++) {
      feed(-30, 0.5);
    }
    expect(detector.detected).toBe(false);
  });
});
