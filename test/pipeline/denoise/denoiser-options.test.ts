import { describe, expect, it } from 'vitest';
import {
  DEFAULT_DENOISER_TUNING,
  DEFAULT_DENOISING_PLAN,
  FourierDenoiser,
  type FourierDenoiserOptions,
} from '../../../src/pipeline/denoise/fourier-denoiser.js';

const RANGES = {
  staticThreshold: [-80, 0],
  baselineOffsetDb: [-30, -5],
  windowSizeMs: [1000, 30000],
  baselinePercentile: [1, 99],
} as const;

function make(options: Partial<FourierDenoiserOptions>): FourierDenoiser {
  return new FourierDenoiser({ sampleRateHz: 16000, enabled: true, ...options });
}

describe('FourierDenoiser options', () => {
  it('defaults to the platform plan: disabled, media detection on, −35 / −15 dB, 3 s, 85th', () => {
    expect(DEFAULT_DENOISING_PLAN).toEqual({
      enabled: false,
      mediaDetectionEnabled: true,
      staticThreshold: -35,
      baselineOffsetDb: -15,
      windowSizeMs: 3000,
      baselinePercentile: 85,
    });
    const denoiser = new FourierDenoiser({ sampleRateHz: 16000 });
    expect(denoiser.options).toEqual({
      sampleRateHz: 16000,
      ...DEFAULT_DENOISING_PLAN,
      tuning: DEFAULT_DENOISER_TUNING,
    });
  });

  describe.each(Object.entries(RANGES))('%s', (key, [min, max]) => {
    it(`accepts ${min} and ${max}`, () => {
      expect(make({ [key]: min }).options[key as keyof typeof RANGES]).toBe(min);
      expect(make({ [key]: max }).options[key as keyof typeof RANGES]).toBe(max);
    });

    it.each([min - 0.001, max + 0.001, min - 1, max + 1, Number.NaN, Infinity])(
      'rejects %s with a RangeError naming the field',
      (value) => {
        expect(() => make({ [key]: value })).toThrow(RangeError);
        expect(() => make({ [key]: value })).toThrow(
          new RegExp(`fourierDenoisingPlan\\.${key} must be a number from ${min} to ${max}`),
        );
      },
    );

    it('rejects a non-number', () => {
      expect(() => make({ [key]: '10' as unknown as number })).toThrow(RangeError);
    });
  });

  it('validates the two flags', () => {
    expect(() => make({ enabled: 'yes' as unknown as boolean })).toThrow(
      /fourierDenoisingPlan\.enabled must be true or false/,
    );
    expect(() => make({ mediaDetectionEnabled: 1 as unknown as boolean })).toThrow(
      /fourierDenoisingPlan\.mediaDetectionEnabled/,
    );
    expect(make({ mediaDetectionEnabled: false }).options.mediaDetectionEnabled).toBe(false);
  });

  it('validates the sample rate', () => {
    for (const rate of [8000, 12000, 16000, 24000, 44100, 48000]) {
      expect(make({ sampleRateHz: rate }).hopSize).toBe(rate / 100);
    }
    for (const rate of [0, 11025, 22050, 32000, 96000, 16000.5]) {
      expect(() => make({ sampleRateHz: rate })).toThrow(/sampleRateHz must be one of/);
    }
  });

  it('validates the tuning knobs on both sides', () => {
    expect(make({ tuning: { maxAttenuationDb: 0 } }).options.tuning.maxAttenuationDb).toBe(0);
    expect(make({ tuning: { maxAttenuationDb: 80 } }).options.tuning.maxAttenuationDb).toBe(80);
    expect(() => make({ tuning: { maxAttenuationDb: -1 } })).toThrow(/tuning\.maxAttenuationDb/);
    expect(() => make({ tuning: { maxAttenuationDb: 81 } })).toThrow(RangeError);
    expect(() => make({ tuning: { kneeDb: 0 } })).toThrow(/tuning\.kneeDb/);
    expect(() => make({ tuning: { noiseFloorPercentile: 51 } })).toThrow(RangeError);
    expect(() => make({ tuning: { baselineWarmUpMs: 99 } })).toThrow(RangeError);
    expect(make({ tuning: { releaseMs: 0 } }).options.tuning.releaseMs).toBe(0);
  });

  it('validates even when disabled', () => {
    expect(() => make({ enabled: false, baselineOffsetDb: -4 })).toThrow(RangeError);
  });
});
