import type { ResolvedDenoiserOptions } from './denoiser-options.js';
import { MediaDetector } from './media-detector.js';
import { RollingPercentileBank } from './rolling-percentile.js';

/** Upper band edges, Hz (Zwicker's critical bands); the last band runs to Nyquist. */
const BAND_EDGES_HZ = [
  100, 200, 300, 400, 510, 630, 770, 920, 1080, 1270, 1480, 1720, 2000, 2320, 2700, 3150, 3700,
  4400, 5300, 6400, 7700, 9500, 12000, 15500,
];
/** Levels are quantised in half-dB steps from LEVEL_MIN_DB: bucket 0 … 255 is −100 … +27.5 dB. */
const LEVEL_MIN_DB = -100;
const LEVEL_STEPS_PER_DB = 2;
/** Added to powers before taking logs: −120 dBFS, below PCM16's quantisation floor. */
const POWER_EPSILON = 1e-12;
const PCM_FULL_SCALE = 32768;
/** Critical bands are merged up to this many bins, to steady the narrow low bands' levels. */
const MIN_BINS_PER_BAND = 4;
const FOREGROUND = 0;
const NOISE_FLOOR = 1;
/** Time constant of the per-bin noise estimate; its dB values are refreshed every few blocks. */
const NOISE_TIME_CONSTANT_MS = 1000;
const NOISE_DB_UPDATE_BLOCKS = 4;

export interface StftGeometry {
  hopSize: number;
  fftSize: number;
  binCount: number;
  windowPowerSum: number;
}

/** Band index of each bin, compacted so that every band holds at least one bin. */
function assignBands(sampleRateHz: number, fftSize: number, binCount: number, minBins: number) {
  const bandOfBin = new Uint16Array(binCount);
  let band = 0;
  let edge = 0;
  let binsInBand = 0;
  for (let k = 0; k < binCount; k++) {
    const frequencyHz = (k * sampleRateHz) / fftSize;
    while (edge < BAND_EDGES_HZ.length && frequencyHz >= BAND_EDGES_HZ[edge]!) {
      edge++;
      if (binsInBand >= minBins) {
        band++;
        binsInBand = 0;
      }
    }
    bandOfBin[k] = band;
    binsInBand++;
  }
  return { bandOfBin, bandCount: band + 1 };
}

function smoothingCoefficient(timeConstantMs: number, hopMs: number): number {
  return timeConstantMs <= 0 ? 0 : Math.exp(-hopMs / timeConstantMs);
}

/**
 * The gain computation of the Fourier denoiser, one STFT block at a time.
 *
 * Bins are grouped into critical bands (merged to at least MIN_BINS_PER_BAND bins). Each band's
 * level per block (dBFS of a flat spectrum with the same power density) goes into rolling
 * histograms over the plan's window, which give two percentiles per band:
 *   - the baseline, at `baselinePercentile`: the level of the foreground talker;
 *   - the noise floor, at tuning.noiseFloorPercentile: the level of what never stops.
 * A band is "noise only" in a block when its level is under floor + noiseOnlyMarginDb; those
 * blocks teach each bin its mean noise power. A bin's threshold is then the higher of
 *   baseline + baselineOffsetDb          (background quieter than the talker: the plan's gate)
 *   bin noise mean + noiseMarginDb       (stationary noise)
 * or staticThreshold until baselineWarmUpMs of audio have been seen. A bin whose smoothed level
 * is below its threshold is cut by maxAttenuationDb, through a soft knee `kneeDb` wide centred on
 * the threshold. The gains are smoothed over frequency ([¼ ½ ¼] across bins) and time
 * (attack/release) before they are applied. While steady media is detected the offset is raised
 * by mediaOffsetBoostDb (at most to −5 dB) and the depth becomes mediaMaxAttenuationDb.
 */
export class SpectralGate {
  /** Gains for the last block's bins, to multiply the spectrum by. */
  readonly gains: Float64Array;
  readonly bandCount: number;
  readonly media: MediaDetector;
  private readonly options: ResolvedDenoiserOptions;
  private readonly bandOfBin: Uint16Array;
  private readonly binsPerBand: Float64Array;
  private readonly powerScale: number;
  private readonly levelCoefficient: number;
  private readonly attackCoefficient: number;
  private readonly releaseCoefficient: number;
  private readonly warmUpBlocks: number;
  private readonly levels: RollingPercentileBank;
  private readonly smoothedPower: Float64Array;
  private readonly binLevelDb: Float64Array;
  /** Instantaneous bin powers one and two blocks back, for the media detector's flux. */
  private readonly power1: Float64Array;
  private readonly power2: Float64Array;
  private readonly bandPower: Float64Array;
  private readonly bandBuckets: Uint8Array;
  /** Per band: baseline + offset, and the noise-only test level, floor + margin (dBFS). */
  private readonly foregroundDb: Float64Array;
  private readonly noiseOnlyDb: Float64Array;
  private readonly noiseOnlyPower: Float64Array;
  /** Per bin: noise-only blocks learned so far, mean noise power and its dB. */
  private readonly noiseBlocks: Float64Array;
  private readonly noisePower: Float64Array;
  private readonly noiseDb: Float64Array;
  private readonly noiseCoefficient: number;
  private blocksSinceNoiseDb = 0;
  private readonly targets: Float64Array;

  constructor(options: ResolvedDenoiserOptions, geometry: StftGeometry) {
    this.options = options;
    const { binCount, fftSize, hopSize } = geometry;
    const hopMs = (hopSize * 1000) / options.sampleRateHz;
    const bands = assignBands(options.sampleRateHz, fftSize, binCount, MIN_BINS_PER_BAND);
    this.bandOfBin = bands.bandOfBin;
    this.bandCount = bands.bandCount;
    this.binsPerBand = new Float64Array(this.bandCount);
    for (let k = 0; k < binCount; k++) {
      this.binsPerBand[this.bandOfBin[k]!]!++;
    }
    this.powerScale = 1 / (geometry.windowPowerSum * PCM_FULL_SCALE * PCM_FULL_SCALE);
    const { tuning } = options;
    this.levelCoefficient = smoothingCoefficient(tuning.levelSmoothingMs, hopMs);
    this.attackCoefficient = 1 - smoothingCoefficient(tuning.attackMs, hopMs);
    this.releaseCoefficient = 1 - smoothingCoefficient(tuning.releaseMs, hopMs);
    const windowBlocks = Math.max(1, Math.round(options.windowSizeMs / hopMs));
    this.warmUpBlocks = Math.min(windowBlocks, Math.round(tuning.baselineWarmUpMs / hopMs));
    this.levels = new RollingPercentileBank(this.bandCount, windowBlocks, [
      options.baselinePercentile,
      tuning.noiseFloorPercentile,
    ]);
    this.media = new MediaDetector({ hopMs });
    this.gains = new Float64Array(binCount);
    this.smoothedPower = new Float64Array(binCount);
    this.binLevelDb = new Float64Array(binCount);
    this.power1 = new Float64Array(binCount);
    this.power2 = new Float64Array(binCount);
    this.bandPower = new Float64Array(this.bandCount);
    this.bandBuckets = new Uint8Array(this.bandCount);
    this.foregroundDb = new Float64Array(this.bandCount);
    this.noiseOnlyDb = new Float64Array(this.bandCount);
    this.noiseOnlyPower = new Float64Array(this.bandCount);
    this.noiseBlocks = new Float64Array(binCount);
    this.noisePower = new Float64Array(binCount);
    this.noiseDb = new Float64Array(binCount);
    this.noiseCoefficient = 1 - smoothingCoefficient(NOISE_TIME_CONSTANT_MS, hopMs);
    this.targets = new Float64Array(binCount);
    this.reset();
  }

  /** Whether the rolling baseline has replaced staticThreshold. */
  get baselineEstablished(): boolean {
    return this.levels.size >= this.warmUpBlocks;
  }

  /** Whether the media detector is on (always false with mediaDetectionEnabled off). */
  get mediaMode(): boolean {
    return this.options.mediaDetectionEnabled && this.media.detected;
  }

  /** The gate threshold of bin `k` for the last block, dBFS. */
  thresholdOfBin(k: number): number {
    if (!this.baselineEstablished) {
      return this.options.staticThreshold;
    }
    return Math.max(
      this.foregroundDb[this.bandOfBin[k]!]!,
      this.noiseDb[k]! + this.options.tuning.noiseMarginDb,
    );
  }

  /** Level that the baseline (tracker 0) or noise floor (tracker 1) of `band` stands at, dBFS. */
  percentileLevelDb(band: number, tracker: 0 | 1): number {
    return LEVEL_MIN_DB + this.levels.bucket(band, tracker) / LEVEL_STEPS_PER_DB;
  }

  /** Computes `gains` for the block whose half spectrum is re/im. */
  update(re: Float64Array, im: Float64Array): void {
    const binCount = this.gains.length;
    const bandOfBin = this.bandOfBin;
    const smoothed = this.smoothedPower;
    const binLevelDb = this.binLevelDb;
    const power1 = this.power1;
    const power2 = this.power2;
    const bandPower = this.bandPower;
    const scale = this.powerScale;
    const a = this.levelCoefficient;
    bandPower.fill(0);
    let totalPower = 0;
    let fluxChange = 0;
    let fluxTotal = 0;
    for (let k = 0; k < binCount; k++) {
      const power = (re[k]! * re[k]! + im[k]! * im[k]!) * scale;
      const s = a * smoothed[k]! + (1 - a) * power;
      smoothed[k] = s;
      bandPower[bandOfBin[k]!]! += power;
      totalPower += power;
      binLevelDb[k] = 10 * Math.log10(s + POWER_EPSILON);
      const before = power2[k]!;
      fluxChange += power > before ? power - before : before - power;
      fluxTotal += power + before;
      power2[k] = power1[k]!;
      power1[k] = power;
    }
    for (let b = 0; b < this.bandCount; b++) {
      const levelDb = 10 * Math.log10(bandPower[b]! / this.binsPerBand[b]! + POWER_EPSILON);
      const bucket = Math.round((levelDb - LEVEL_MIN_DB) * LEVEL_STEPS_PER_DB);
      this.bandBuckets[b] = bucket < 0 ? 0 : bucket > 255 ? 255 : bucket;
    }
    this.levels.push(this.bandBuckets);
    this.media.features[0] = 10 * Math.log10(totalPower / binCount + POWER_EPSILON);
    this.media.features[1] = fluxTotal > 0 ? fluxChange / fluxTotal : 1;
    this.media.update();
    const established = this.baselineEstablished;
    if (established) {
      this.updateThresholds();
      this.learnNoise();
    }
    this.updateTargets(established);
    this.smoothGains();
  }

  private updateThresholds(): void {
    const { options } = this;
    const offsetDb = this.mediaMode
      ? Math.min(-5, options.baselineOffsetDb + options.tuning.mediaOffsetBoostDb)
      : options.baselineOffsetDb;
    const noiseOnlyMarginDb = options.tuning.noiseOnlyMarginDb;
    for (let b = 0; b < this.bandCount; b++) {
      this.foregroundDb[b] = this.percentileLevelDb(b, FOREGROUND) + offsetDb;
      this.noiseOnlyDb[b] = this.percentileLevelDb(b, NOISE_FLOOR) + noiseOnlyMarginDb;
      this.noiseOnlyPower[b] = Math.pow(10, this.noiseOnlyDb[b]! / 10);
    }
  }

  /**
   * Learns each bin's mean noise power from the blocks in which its band holds only noise: the
   * mean power of the band's other bins is under the band's floor + noiseOnlyMarginDb. Leaving
   * the bin out keeps its own peaks from deciding whether it is learned, which would bias the
   * estimate low where one bin dominates its band (the lowest bins of pink noise, hum). A running
   * mean over a bin's first blocks, then an exponential one. Until a bin has learned, it uses its
   * band's floor.
   */
  private learnNoise(): void {
    const noisePower = this.noisePower;
    const noiseBlocks = this.noiseBlocks;
    const bandOfBin = this.bandOfBin;
    const minimumRate = this.noiseCoefficient;
    const limit = this.noiseOnlyPower;
    const refresh = ++this.blocksSinceNoiseDb >= NOISE_DB_UPDATE_BLOCKS;
    if (refresh) {
      this.blocksSinceNoiseDb = 0;
    }
    for (let k = 0; k < noisePower.length; k++) {
      const b = bandOfBin[k]!;
      const power = this.power1[k]!;
      const others = this.binsPerBand[b]! - 1;
      const othersMean = others > 0 ? (this.bandPower[b]! - power) / others : power;
      if (othersMean < limit[b]!) {
        const count = ++noiseBlocks[k]!;
        const rate = 1 / count > minimumRate ? 1 / count : minimumRate;
        noisePower[k] = noisePower[k]! + rate * (power - noisePower[k]!);
        if (count <= NOISE_DB_UPDATE_BLOCKS) {
          this.noiseDb[k] = 10 * Math.log10(noisePower[k]! + POWER_EPSILON);
          continue;
        }
      } else if (noiseBlocks[k] === 0) {
        this.noiseDb[k] = this.noiseOnlyDb[b]! - this.options.tuning.noiseOnlyMarginDb;
        continue;
      }
      if (refresh) {
        this.noiseDb[k] = 10 * Math.log10(noisePower[k]! + POWER_EPSILON);
      }
    }
  }

  /** Per-bin target gains through the soft knee, then smoothed across frequency. */
  private updateTargets(established: boolean): void {
    const { tuning, staticThreshold } = this.options;
    const depthDb = this.mediaMode ? tuning.mediaMaxAttenuationDb : tuning.maxAttenuationDb;
    const floorGain = Math.pow(10, -depthDb / 20);
    const halfKnee = tuning.kneeDb / 2;
    const marginDb = this.options.tuning.noiseMarginDb;
    const targets = this.targets;
    const binCount = targets.length;
    for (let k = 0; k < binCount; k++) {
      const level = this.binLevelDb[k]!;
      let x = level - staticThreshold;
      if (established) {
        const b = this.bandOfBin[k]!;
        const aboveForeground = level - this.foregroundDb[b]!;
        const aboveNoise = level - this.noiseDb[k]! - marginDb;
        x = aboveForeground < aboveNoise ? aboveForeground : aboveNoise;
      }
      targets[k] =
        x <= -halfKnee
          ? floorGain
          : x >= halfKnee
            ? 1
            : Math.pow(10, (-depthDb * (halfKnee - x)) / tuning.kneeDb / 20);
    }
    // [¼ ½ ¼] across bins, mirrored at the edges.
    let before = targets[1] ?? targets[0]!;
    for (let k = 0; k < binCount; k++) {
      const here = targets[k]!;
      const after = k + 1 < binCount ? targets[k + 1]! : before;
      targets[k] = 0.25 * before + 0.5 * here + 0.25 * after;
      before = here;
    }
  }

  private smoothGains(): void {
    const targets = this.targets;
    const gains = this.gains;
    for (let k = 0; k < gains.length; k++) {
      const g = gains[k]!;
      const t = targets[k]!;
      gains[k] = g + (t > g ? this.attackCoefficient : this.releaseCoefficient) * (t - g);
    }
  }

  /** Forgets all statistics; gains restart closed (fully open with maxAttenuationDb 0). */
  reset(): void {
    this.levels.reset();
    this.media.reset();
    this.smoothedPower.fill(0);
    this.power1.fill(0);
    this.power2.fill(0);
    this.binLevelDb.fill(0);
    this.foregroundDb.fill(0);
    this.noiseOnlyDb.fill(0);
    this.noiseOnlyPower.fill(0);
    this.noiseBlocks.fill(0);
    this.noisePower.fill(0);
    this.noiseDb.fill(0);
    this.blocksSinceNoiseDb = 0;
    this.gains.fill(Math.pow(10, -this.options.tuning.maxAttenuationDb / 20));
  }
}
