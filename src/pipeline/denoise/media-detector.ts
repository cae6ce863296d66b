import { RollingPercentileBank } from './rolling-percentile.js';

/**
 * Steady-media detector: TV, radio and music differ from a person talking into a phone in that
 * their energy is sustained (no breathing pauses) and their spectrum is stable from one block to
 * the next (held notes, steady timbre), where a noisy room's background (fans, traffic, hiss)
 * changes randomly from block to block.
 *
 * Per STFT block it takes the broadband level (dBFS) and the spectral flux: Σ|P_t − P_{t−2}| /
 * Σ(P_t + P_{t−2}) over the bins' powers two hops apart (non-overlapping windows); it is about
 * 0.5 for any stationary random noise, near 0 for held tones, and between for speech. It tracks
 * the 10th percentile of the level over `windowMs` (the floor), and calls the blocks within
 * BACKGROUND_RANGE_DB of the floor the background: what is left when nobody talks close to the
 * microphone. The block is a media candidate when
 *   - the floor is at least MIN_FLOOR_DB (sustained energy: 90% of the window is that loud), and
 *   - the median flux of the last BACKGROUND_BLOCKS background blocks is at most
 *     MAX_BACKGROUND_FLUX (the background is tonally stable, not noise).
 * `detected` turns on after `onHoldMs` of consecutive candidates and off after `offHoldMs` of
 * consecutive non-candidates, so it neither flickers nor drops while someone talks over the TV.
 */
export const MIN_FLOOR_DB = -60;
export const BACKGROUND_RANGE_DB = 6;
export const BACKGROUND_BLOCKS = 100;
export const MAX_BACKGROUND_FLUX = 0.42;

const LEVEL_MIN_DB = -100;
const LEVEL_STEPS_PER_DB = 2;
const FLUX_STEPS = 250;

export interface MediaDetectorOptions {
  hopMs: number;
  /** Default 2000 ms. */
  windowMs?: number;
  /** Default 1000 ms. */
  onHoldMs?: number;
  /** Default 3000 ms. */
  offHoldMs?: number;
}

export class MediaDetector {
  /** Whether steady media is playing, after hysteresis. */
  detected = false;
  /** Latest statistics, for diagnostics: level floor (dBFS) and background median flux. */
  floorDb = LEVEL_MIN_DB;
  backgroundFlux = 1;
  private readonly levels: RollingPercentileBank;
  private readonly fluxes: RollingPercentileBank;
  private readonly row = new Uint8Array(1);
  private readonly onHoldBlocks: number;
  private readonly offHoldBlocks: number;
  private streak = 0;

  constructor(options: MediaDetectorOptions) {
    const windowBlocks = Math.max(2, Math.round((options.windowMs ?? 2000) / options.hopMs));
    this.onHoldBlocks = Math.max(1, Math.round((options.onHoldMs ?? 1000) / options.hopMs));
    this.offHoldBlocks = Math.max(1, Math.round((options.offHoldMs ?? 3000) / options.hopMs));
    this.levels = new RollingPercentileBank(1, windowBlocks, [10]);
    this.fluxes = new RollingPercentileBank(1, BACKGROUND_BLOCKS, [50]);
  }

  /**
   * The next block's features: [0] its broadband level (dBFS) and [1] its flux as described above
   * (0 … 1). Written here and read by update(), so that no doubles are boxed per call.
   */
  readonly features = new Float64Array(2);

  /** Takes the block whose features are in `features`. */
  update(): void {
    const levelDb = this.features[0]!;
    const flux = this.features[1]!;
    const level = Math.round((levelDb - LEVEL_MIN_DB) * LEVEL_STEPS_PER_DB);
    this.row[0] = level < 0 ? 0 : level > 255 ? 255 : level;
    this.levels.push(this.row);
    this.floorDb = LEVEL_MIN_DB + this.levels.bucket(0, 0) / LEVEL_STEPS_PER_DB;
    if (levelDb <= this.floorDb + BACKGROUND_RANGE_DB) {
      const bucket = Math.round(flux * FLUX_STEPS);
      this.row[0] = bucket < 0 ? 0 : bucket > FLUX_STEPS ? FLUX_STEPS : bucket;
      this.fluxes.push(this.row);
      this.backgroundFlux = this.fluxes.bucket(0, 0) / FLUX_STEPS;
    }
    const candidate =
      this.levels.size === this.levels.capacity &&
      this.fluxes.size === this.fluxes.capacity &&
      this.floorDb >= MIN_FLOOR_DB &&
      this.backgroundFlux <= MAX_BACKGROUND_FLUX;
    if (candidate !== this.detected) {
      this.streak++;
      if (this.streak >= (candidate ? this.onHoldBlocks : this.offHoldBlocks)) {
        this.detected = candidate;
        this.streak = 0;
      }
    } else {
      this.streak = 0;
    }
  }

  reset(): void {
    this.levels.reset();
    this.fluxes.reset();
    this.detected = false;
    this.streak = 0;
    this.floorDb = LEVEL_MIN_DB;
    this.backgroundFlux = 1;
  }
}
