import { describe, expect, it } from 'vitest';
import { designPolyphaseFilter, filterGainDb } from '../../../src/media/resample/filter-design.js';
import {
  RESAMPLER_RATES_HZ,
  Resampler,
  type ResamplerRateHz,
} from '../../../src/media/resample/resampler.js';
import { aliasOf, fitSine, sineSamples, wrapPhase } from './signal-fit.js';

const PAIRS: [ResamplerRateHz, ResamplerRateHz][] = RESAMPLER_RATES_HZ.flatMap((a) =>
  RESAMPLER_RATES_HZ.filter((b) => b !== a).map((b): [ResamplerRateHz, ResamplerRateHz] => [a, b]),
);

function resampleAll(resampler: Resampler, input: Int16Array): Int16Array {
  const output = new Int16Array(resampler.outputLengthFor(input.length));
  expect(resampler.process(input, output)).toBe(output.length);
  return output;
}

function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Output samples to skip: the filter is filling with the stream's first samples. */
function settle(resampler: Resampler): number {
  return Math.ceil((resampler.tapsPerPhase * resampler.upFactor) / resampler.downFactor) + 2;
}

describe('Resampler passband', () => {
  it.each(PAIRS)('%i → %i Hz keeps tones’ level (±0.1 dB), frequency and delay', (from, to) => {
    const nyquistHz = Math.min(from, to) / 2;
    for (const fraction of [0.3, 0.8]) {
      const resampler = new Resampler({ inputRateHz: from, outputRateHz: to });
      const toneHz = Math.round(fraction * nyquistHz);
      const amplitude = 16000;
      const output = resampleAll(resampler, sineSamples(from / 2, amplitude, toneHz, from));
      expect(output.length).toBe(to / 2);
      const fit = fitSine(output, toneHz, to, settle(resampler));
      expect(Math.abs(20 * Math.log10(fit.amplitude / amplitude))).toBeLessThan(0.1);
      // What a tone of this frequency does not explain is quantisation noise, > 60 dB down.
      expect(20 * Math.log10(fit.residualRms / (amplitude / Math.SQRT2))).toBeLessThan(-60);
      // The output is the input delayed by the reported group delay.
      const expectedPhase = (-2 * Math.PI * toneHz * resampler.groupDelayMs) / 1000;
      expect(Math.abs(wrapPhase(fit.phase - expectedPhase))).toBeLessThan(0.002);
    }
  });
});

describe('Resampler stopband', () => {
  const cases: [ResamplerRateHz, ResamplerRateHz, number][] = [
    [16000, 8000, 6000.37],
    [16000, 8000, 4400.37],
    [48000, 16000, 12000.37],
    [48000, 8000, 7000.37],
    [44100, 16000, 12000.37],
    [24000, 16000, 10000.37],
    [48000, 44100, 23000.37],
  ];

  // The requirement is 60 dB; the filters are designed for 80 dB, so regressions show before that.
  // Tone frequencies are not simple fractions of the rates, so that Int16 rounding spreads as noise
  // rather than landing on the frequency measured.
  it.each(cases)('%i → %i Hz: a %s Hz tone’s alias is at least 75 dB down', (from, to, toneHz) => {
    const resampler = new Resampler({ inputRateHz: from, outputRateHz: to });
    const amplitude = 16000;
    const output = resampleAll(resampler, sineSamples(from, amplitude, toneHz, from));
    const alias = fitSine(output, aliasOf(toneHz, to), to, settle(resampler));
    expect(20 * Math.log10(alias.amplitude / amplitude)).toBeLessThan(-75);
  });

  it.each([
    [8000, 16000, 3000.37],
    [8000, 48000, 3000.37],
    [16000, 44100, 6000.37],
  ] as const)('%i → %i Hz: images of a %s Hz tone are at least 75 dB down', (from, to, toneHz) => {
    const resampler = new Resampler({ inputRateHz: from, outputRateHz: to });
    const amplitude = 16000;
    const output = resampleAll(resampler, sineSamples(from, amplitude, toneHz, from));
    const start = settle(resampler);
    expect(fitSine(output, toneHz, to, start).amplitude / amplitude).toBeGreaterThan(0.99);
    for (let k = 1; k * from - toneHz < to / 2; k++) {
      for (const imageHz of [k * from - toneHz, k * from + toneHz]) {
        if (imageHz < to / 2) {
          const image = fitSine(output, imageHz, to, start);
          expect(20 * Math.log10(image.amplitude / amplitude)).toBeLessThan(-75);
        }
      }
    }
  });

  it('designs filters that meet their specification', () => {
    for (const [from, to] of [
      [16000, 8000],
      [8000, 16000],
      [48000, 16000],
    ] as const) {
      const filter = designPolyphaseFilter(from, to);
      let low = Infinity;
      let high = -Infinity;
      for (let i = 0; i <= 200; i++) {
        const gain = filterGainDb(filter, (filter.passbandEdgeHz * i) / 200);
        low = Math.min(low, gain);
        high = Math.max(high, gain);
      }
      expect(high - low).toBeLessThan(0.01);
      const prototypeNyquistHz = (filter.upFactor * from) / 2;
      for (let i = 0; i <= 400; i++) {
        const f = filter.stopbandEdgeHz + ((prototypeNyquistHz - filter.stopbandEdgeHz) * i) / 400;
        expect(filterGainDb(filter, f)).toBeLessThan(-79);
      }
    }
  });
});

describe('Resampler streaming', () => {
  const streamPairs: [ResamplerRateHz, ResamplerRateHz][] = [
    [48000, 16000],
    [8000, 16000],
    [44100, 48000],
    [48000, 44100],
    [16000, 44100],
    [44100, 8000],
  ];

  it.each(streamPairs)('%i → %i Hz gives the same samples in random chunks', (from, to) => {
    const next = random(from + to);
    const input = Int16Array.from({ length: 30011 }, () => Math.floor(next() * 40000) - 20000);
    const whole = resampleAll(new Resampler({ inputRateHz: from, outputRateHz: to }), input);
    const resampler = new Resampler({ inputRateHz: from, outputRateHz: to });
    expect(whole.length).toBe(
      Math.ceil((input.length * resampler.upFactor) / resampler.downFactor),
    );
    const pieces = new Int16Array(whole.length);
    let inputOffset = 0;
    let outputOffset = 0;
    while (inputOffset < input.length) {
      const n = Math.min(
        input.length - inputOffset,
        Math.floor(next() * 5000) * (next() < 0.2 ? 0 : 1),
      );
      const expected = resampler.outputLengthFor(n);
      const written = resampler.process(input, pieces, inputOffset, n, outputOffset);
      expect(written).toBe(expected);
      inputOffset += n;
      outputOffset += written;
    }
    expect(outputOffset).toBe(whole.length);
    expect(pieces).toEqual(whole);
  });

  it('keeps exact output counts over a long stream of 10 ms chunks', () => {
    for (const [from, to] of [
      [44100, 48000],
      [8000, 44100],
      [48000, 8000],
    ] as const) {
      const resampler = new Resampler({ inputRateHz: from, outputRateHz: to });
      const chunk = new Int16Array(from / 100);
      const output = new Int16Array(resampler.maxOutputLength(chunk.length));
      let totalIn = 0;
      let totalOut = 0;
      for (let i = 0; i < 3000; i++) {
        totalOut += resampler.process(chunk, output);
        totalIn += chunk.length;
        const exact = Math.ceil((totalIn * resampler.upFactor) / resampler.downFactor);
        if (totalOut !== exact) {
          throw new Error(`after ${totalIn} samples: ${totalOut} out, expected ${exact}`);
        }
      }
      expect(totalOut).toBe((to / 100) * 3000);
    }
  });

  it('handles empty input, refuses a short output buffer without changing state, resets', () => {
    const input = sineSamples(960, 10000, 1000, 48000);
    const fresh = resampleAll(new Resampler({ inputRateHz: 48000, outputRateHz: 16000 }), input);
    const resampler = new Resampler({ inputRateHz: 48000, outputRateHz: 16000 });
    expect(resampler.process(new Int16Array(0), new Int16Array(0))).toBe(0);
    expect(() => resampler.process(input, new Int16Array(319))).toThrow(RangeError);
    expect(resampleAll(resampler, input)).toEqual(fresh);
    resampler.reset();
    expect(resampleAll(resampler, input)).toEqual(fresh);
  });

  it('passes equal rates through untouched with no delay', () => {
    const resampler = new Resampler({ inputRateHz: 16000, outputRateHz: 16000 });
    const input = sineSamples(320, 30000, 7900, 16000);
    expect(resampleAll(resampler, input)).toEqual(input);
    expect(resampler.groupDelayMs).toBe(0);
  });

  it('reports its ratio and group delay, and rejects unsupported rates', () => {
    const up = new Resampler({ inputRateHz: 44100, outputRateHz: 48000 });
    expect([up.upFactor, up.downFactor]).toEqual([160, 147]);
    expect(up.groupDelayOutputSamples).toBeCloseTo((up.groupDelayMs * 48000) / 1000, 9);
    const down = new Resampler({ inputRateHz: 48000, outputRateHz: 16000 });
    expect([down.upFactor, down.downFactor]).toEqual([1, 3]);
    expect(down.groupDelayInputSamples).toBe((down.tapsPerPhase - 1) / 2);
    for (const bad of [7999, 48001, 16000.5, Number.NaN]) {
      expect(() => new Resampler({ inputRateHz: bad, outputRateHz: 16000 })).toThrow(RangeError);
      expect(() => new Resampler({ inputRateHz: 16000, outputRateHz: bad })).toThrow(RangeError);
    }
  });
});

describe('Resampler at any rate in 8000–48000 Hz', () => {
  // 11025/22050/32000 use exact tables (L = 640, 320, 1 …); 8001 and 47999 share no factor with
  // 16000, so L = 16000 and the table is interpolated between 512 phases.
  const odd: [number, number][] = [
    [11025, 16000],
    [16000, 11025],
    [22050, 16000],
    [16000, 22050],
    [32000, 16000],
    [8000, 32000],
    [22050, 8000],
    [8001, 16000],
    [16000, 47999],
    [47999, 16000],
  ];

  it.each(odd)('%i → %i Hz keeps tones’ level (±0.1 dB), frequency and delay', (from, to) => {
    const nyquistHz = Math.min(from, to) / 2;
    for (const fraction of [0.3, 0.8]) {
      const resampler = new Resampler({ inputRateHz: from, outputRateHz: to });
      const toneHz = Math.round(fraction * nyquistHz);
      const amplitude = 16000;
      const output = resampleAll(resampler, sineSamples(from, amplitude, toneHz, from));
      expect(output.length).toBe(to);
      const fit = fitSine(output, toneHz, to, settle(resampler));
      expect(Math.abs(20 * Math.log10(fit.amplitude / amplitude))).toBeLessThan(0.1);
      expect(20 * Math.log10(fit.residualRms / (amplitude / Math.SQRT2))).toBeLessThan(-60);
      const expectedPhase = (-2 * Math.PI * toneHz * resampler.groupDelayMs) / 1000;
      expect(Math.abs(wrapPhase(fit.phase - expectedPhase))).toBeLessThan(0.002);
    }
  });

  it.each([
    [22050, 16000, 10000.37],
    [32000, 16000, 12000.37],
    [11025, 8000, 5000.37],
    [47999, 16000, 12000.37],
    [22050, 8000, 9000.37],
  ] as const)('%i → %i Hz: a %s Hz tone’s alias is at least 75 dB down', (from, to, toneHz) => {
    const resampler = new Resampler({ inputRateHz: from, outputRateHz: to });
    const amplitude = 16000;
    const output = resampleAll(resampler, sineSamples(from, amplitude, toneHz, from));
    const alias = fitSine(output, aliasOf(toneHz, to), to, settle(resampler));
    expect(20 * Math.log10(alias.amplitude / amplitude)).toBeLessThan(-75);
  });

  it.each([
    [11025, 16000, 4000.37],
    [8001, 16000, 3000.37],
  ] as const)('%i → %i Hz: images of a %s Hz tone are at least 75 dB down', (from, to, toneHz) => {
    const resampler = new Resampler({ inputRateHz: from, outputRateHz: to });
    const amplitude = 16000;
    const output = resampleAll(resampler, sineSamples(from, amplitude, toneHz, from));
    const start = settle(resampler);
    expect(fitSine(output, toneHz, to, start).amplitude / amplitude).toBeGreaterThan(0.99);
    const imageHz = from - toneHz;
    expect(20 * Math.log10(fitSine(output, imageHz, to, start).amplitude / amplitude)).toBeLessThan(
      -75,
    );
  });

  it.each([
    [11025, 16000],
    [8001, 16000],
    [47999, 16000],
  ] as const)('%i → %i Hz gives the same samples in 20 ms chunks and exact counts', (from, to) => {
    const next = random(from);
    const input = Int16Array.from({ length: 20011 }, () => Math.floor(next() * 40000) - 20000);
    const whole = resampleAll(new Resampler({ inputRateHz: from, outputRateHz: to }), input);
    const resampler = new Resampler({ inputRateHz: from, outputRateHz: to });
    const pieces = new Int16Array(whole.length);
    const chunk = Math.round(from / 50);
    let outputOffset = 0;
    for (let offset = 0; offset < input.length; offset += chunk) {
      const n = Math.min(chunk, input.length - offset);
      outputOffset += resampler.process(input, pieces, offset, n, outputOffset);
    }
    expect(outputOffset).toBe(Math.ceil((input.length * to) / from));
    expect(pieces).toEqual(whole);
  });

  it('interpolates only where the exact table would be too large', () => {
    expect(new Resampler({ inputRateHz: 11025, outputRateHz: 16000 }).filter?.interpolated).toBe(
      false,
    );
    const interpolated = new Resampler({ inputRateHz: 8001, outputRateHz: 16000 });
    expect(interpolated.filter?.interpolated).toBe(true);
    expect(interpolated.filter?.coefficients.length).toBe(513 * interpolated.tapsPerPhase);
  });
});
