/**
 * A cheap energy voice-activity detector over 10/20 ms PCM16 frames. It tracks an adaptive noise
 * floor in dBFS and calls a frame speech when its level stands a margin above that floor (and
 * above an absolute minimum). It is the fallback when Silero is unavailable and the gate that keeps
 * Silero from running during silence, so it errs on the side of "speech": a hangover keeps it open
 * for a while after the last loud frame.
 *
 * Allocation-free: `process` touches only numbers held on the instance.
 */

export interface EnergyVadOptions {
  sampleRateHz: number;
  /** A frame is speech when its level is this far above the noise floor. Default 9 dB. */
  speechMarginDb?: number;
  /** Frames quieter than this are never speech, whatever the floor. Default −55 dBFS. */
  minSpeechDbfs?: number;
  /** Noise floor before any audio was seen. Default −60 dBFS. */
  initialNoiseFloorDbfs?: number;
  /** How fast the floor may climb while the level is above it. Default 3 dB per second. */
  floorRiseDbPerS?: number;
  /** Time constant with which the floor falls to a quieter level. Default 100 ms. */
  floorFallTimeConstantMs?: number;
  /** The detector stays "speech" this long after the last loud frame. Default 200 ms. */
  hangoverMs?: number;
}

/** Level reported for digital silence; also the lowest the floor goes. */
export const SILENCE_DBFS = -100;

const FULL_SCALE_SQUARED = 32768 * 32768;

/** Level of PCM16 samples in dBFS (RMS relative to a full-scale square wave), at least −100. */
export function levelDbfs(samples: Int16Array): number {
  const n = samples.length;
  if (n === 0) {
    return SILENCE_DBFS;
  }
  let sum = 0;
  for (let i = 0; i < n; i++) {
    const s = samples[i]!;
    sum += s * s;
  }
  const meanSquare = sum / n / FULL_SCALE_SQUARED;
  return meanSquare <= 1e-10 ? SILENCE_DBFS : Math.max(SILENCE_DBFS, 10 * Math.log10(meanSquare));
}

export class EnergyVad {
  readonly sampleRateHz: number;
  private readonly speechMarginDb: number;
  private readonly minSpeechDbfs: number;
  private readonly initialNoiseFloorDbfs: number;
  private readonly floorRiseDbPerS: number;
  private readonly floorFallTimeConstantMs: number;
  private readonly hangoverMs: number;
  private floorDbfs: number;
  private lastDbfs = SILENCE_DBFS;
  /** Milliseconds left of hangover; > 0 means the detector is still open. */
  private hangoverLeftMs = 0;
  private speech = false;

  constructor(options: EnergyVadOptions) {
    if (!(options.sampleRateHz > 0)) {
      throw new RangeError(`sample rate must be positive, got ${String(options.sampleRateHz)}`);
    }
    this.sampleRateHz = options.sampleRateHz;
    this.speechMarginDb = options.speechMarginDb ?? 9;
    this.minSpeechDbfs = options.minSpeechDbfs ?? -55;
    this.initialNoiseFloorDbfs = options.initialNoiseFloorDbfs ?? -60;
    this.floorRiseDbPerS = options.floorRiseDbPerS ?? 3;
    this.floorFallTimeConstantMs = options.floorFallTimeConstantMs ?? 100;
    this.hangoverMs = options.hangoverMs ?? 200;
    this.floorDbfs = this.initialNoiseFloorDbfs;
  }

  /** The current noise-floor estimate in dBFS. */
  get noiseFloorDbfs(): number {
    return this.floorDbfs;
  }

  /** The level of the last frame in dBFS. */
  get lastLevelDbfs(): number {
    return this.lastDbfs;
  }

  /** The last decision (including hangover). */
  get isSpeech(): boolean {
    return this.speech;
  }

  /** Classifies one frame (any length; 10 or 20 ms in the pipeline) and returns `isSpeech`. */
  process(samples: Int16Array): boolean {
    const frameMs = (samples.length * 1000) / this.sampleRateHz;
    const level = levelDbfs(samples);
    this.lastDbfs = level;
    const loud = level >= this.minSpeechDbfs && level >= this.floorDbfs + this.speechMarginDb;
    // Adapt the floor: fall quickly towards quieter frames, climb slowly under louder ones, so
    // that speech barely moves it but a lasting rise in background noise is followed.
    if (level < this.floorDbfs) {
      const alpha = 1 - Math.exp(-frameMs / this.floorFallTimeConstantMs);
      this.floorDbfs += alpha * (level - this.floorDbfs);
    } else {
      this.floorDbfs = Math.min(level, this.floorDbfs + (this.floorRiseDbPerS * frameMs) / 1000);
    }
    if (this.floorDbfs < SILENCE_DBFS) {
      this.floorDbfs = SILENCE_DBFS;
    }
    if (loud) {
      this.hangoverLeftMs = this.hangoverMs;
      this.speech = true;
    } else if (this.hangoverLeftMs > 0) {
      this.hangoverLeftMs -= frameMs;
      this.speech = true;
    } else {
      this.speech = false;
    }
    return this.speech;
  }

  reset(): void {
    this.floorDbfs = this.initialNoiseFloorDbfs;
    this.lastDbfs = SILENCE_DBFS;
    this.hangoverLeftMs = 0;
    this.speech = false;
  }
}
