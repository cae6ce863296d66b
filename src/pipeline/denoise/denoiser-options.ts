import { isSupportedSampleRate, SAMPLE_RATES_HZ } from '../../media/audio-frame.js';

/**
 * The fields of the platform's `backgroundSpeechDenoisingPlan.fourierDenoisingPlan`
 * (docs/denoising.md explains how each is read). Missing fields take the platform's defaults.
 */
export interface FourierDenoisingPlan {
  /** Default false: audio passes through untouched, with no delay. */
  enabled?: boolean;
  /** Default true: switch to more aggressive settings while steady media (TV, music) plays. */
  mediaDetectionEnabled?: boolean;
  /** Default −35 (−80 … 0) dBFS: the gate threshold until a rolling baseline exists. */
  staticThreshold?: number;
  /** Default −15 (−30 … −5) dB: the gate threshold relative to the rolling baseline. */
  baselineOffsetDb?: number;
  /** Default 3000 (1000 … 30000) ms: the window the baseline is computed over. */
  windowSizeMs?: number;
  /** Default 85 (1 … 99): the percentile of recent levels that is the baseline. */
  baselinePercentile?: number;
}

/** Parla's own knobs (not part of the platform's plan). Defaults in DEFAULT_DENOISER_TUNING. */
export interface FourierDenoiserTuning {
  /** Deepest cut of a gated bin, dB (0 keeps the gate fully open). */
  maxAttenuationDb: number;
  /** Deepest cut while steady media is detected, dB. */
  mediaMaxAttenuationDb: number;
  /** Added to baselineOffsetDb while media is detected (the result is capped at −5 dB). */
  mediaOffsetBoostDb: number;
  /** Width of the soft knee centred on the threshold, dB. */
  kneeDb: number;
  /** Percentile of recent band levels taken as the stationary noise floor. */
  noiseFloorPercentile: number;
  /** A bin learns noise while its band's other bins average under the band floor + this, dB. */
  noiseOnlyMarginDb: number;
  /** A bin is gated unless it is this far above its mean noise power, dB. */
  noiseMarginDb: number;
  /** Time constant of opening gains, ms. */
  attackMs: number;
  /** Time constant of closing gains, ms. */
  releaseMs: number;
  /** Time constant of the per-bin power smoothing that the gate decisions use, ms. */
  levelSmoothingMs: number;
  /** Audio needed before the rolling baseline replaces staticThreshold, ms. */
  baselineWarmUpMs: number;
}

export const DEFAULT_DENOISING_PLAN: Readonly<Required<FourierDenoisingPlan>> = Object.freeze({
  enabled: false,
  mediaDetectionEnabled: true,
  staticThreshold: -35,
  baselineOffsetDb: -15,
  windowSizeMs: 3000,
  baselinePercentile: 85,
});

export const DEFAULT_DENOISER_TUNING: Readonly<FourierDenoiserTuning> = Object.freeze({
  maxAttenuationDb: 25,
  mediaMaxAttenuationDb: 35,
  mediaOffsetBoostDb: 5,
  kneeDb: 6,
  noiseFloorPercentile: 10,
  noiseOnlyMarginDb: 9,
  noiseMarginDb: 6,
  attackMs: 5,
  releaseMs: 60,
  levelSmoothingMs: 10,
  baselineWarmUpMs: 1000,
});

export interface FourierDenoiserOptions extends FourierDenoisingPlan {
  /** 8000, 12000, 16000, 24000, 44100 or 48000. */
  sampleRateHz: number;
  tuning?: Partial<FourierDenoiserTuning>;
}

export interface ResolvedDenoiserOptions extends Required<FourierDenoisingPlan> {
  sampleRateHz: number;
  tuning: FourierDenoiserTuning;
}

type Range = readonly [min: number, max: number, unit: string];

const PLAN_RANGES: Record<
  'staticThreshold' | 'baselineOffsetDb' | 'windowSizeMs' | 'baselinePercentile',
  Range
> = {
  staticThreshold: [-80, 0, ' dB'],
  baselineOffsetDb: [-30, -5, ' dB'],
  windowSizeMs: [1000, 30000, ' ms'],
  baselinePercentile: [1, 99, ''],
};

const TUNING_RANGES: Record<keyof FourierDenoiserTuning, Range> = {
  maxAttenuationDb: [0, 80, ' dB'],
  mediaMaxAttenuationDb: [0, 80, ' dB'],
  mediaOffsetBoostDb: [0, 25, ' dB'],
  kneeDb: [0.5, 20, ' dB'],
  noiseFloorPercentile: [1, 50, ''],
  noiseOnlyMarginDb: [0, 30, ' dB'],
  noiseMarginDb: [0, 30, ' dB'],
  attackMs: [0, 1000, ' ms'],
  releaseMs: [0, 5000, ' ms'],
  levelSmoothingMs: [0, 1000, ' ms'],
  baselineWarmUpMs: [100, 30000, ' ms'],
};

function checkNumber(path: string, value: unknown, [min, max, unit]: Range): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > max) {
    throw new RangeError(
      `${path} must be a number from ${min} to ${max}${unit}, got ${String(value)}`,
    );
  }
  return value;
}

function checkBoolean(path: string, value: unknown): boolean {
  if (typeof value !== 'boolean') {
    throw new RangeError(`${path} must be true or false, got ${String(value)}`);
  }
  return value;
}

/** Fills in defaults and checks every field; throws a RangeError naming the first bad one. */
export function resolveDenoiserOptions(options: FourierDenoiserOptions): ResolvedDenoiserOptions {
  const { sampleRateHz } = options;
  if (!isSupportedSampleRate(sampleRateHz)) {
    throw new RangeError(
      `sampleRateHz must be one of ${SAMPLE_RATES_HZ.join(', ')}, got ${String(sampleRateHz)}`,
    );
  }
  const plan = 'fourierDenoisingPlan';
  const pick = <K extends keyof FourierDenoisingPlan>(key: K) =>
    options[key] ?? DEFAULT_DENOISING_PLAN[key];
  const resolved: ResolvedDenoiserOptions = {
    sampleRateHz,
    enabled: checkBoolean(`${plan}.enabled`, pick('enabled')),
    mediaDetectionEnabled: checkBoolean(
      `${plan}.mediaDetectionEnabled`,
      pick('mediaDetectionEnabled'),
    ),
    staticThreshold: 0,
    baselineOffsetDb: 0,
    windowSizeMs: 0,
    baselinePercentile: 0,
    tuning: { ...DEFAULT_DENOISER_TUNING },
  };
  for (const key of Object.keys(PLAN_RANGES) as (keyof typeof PLAN_RANGES)[]) {
    resolved[key] = checkNumber(`${plan}.${key}`, pick(key), PLAN_RANGES[key]);
  }
  const tuning = options.tuning ?? {};
  for (const key of Object.keys(TUNING_RANGES) as (keyof FourierDenoiserTuning)[]) {
    const value = tuning[key];
    if (value !== undefined) {
      resolved.tuning[key] = checkNumber(`tuning.${key}`, value, TUNING_RANGES[key]);
    }
  }
  return resolved;
}
