/**
 * Packet-loss concealment by repeat-and-fade: a missing frame is replaced by the last good frame,
 * faded out linearly across `fadeFrames` consecutive missing frames; after that, silence. The
 * fade restarts from full level once a good frame has been remembered again.
 */
export class LossConcealer {
  readonly frameSamples: number;
  readonly fadeFrames: number;
  private readonly lastFrame: Int16Array;
  private hasLastFrame: boolean;
  /** Consecutive frames concealed since the last good one. */
  private run: number;

  constructor(frameSamples: number, fadeFrames: number) {
    if (!Number.isInteger(fadeFrames) || fadeFrames < 0) {
      throw new RangeError(`fadeFrames must be a non-negative integer, got ${fadeFrames}`);
    }
    this.frameSamples = frameSamples;
    this.fadeFrames = fadeFrames;
    this.lastFrame = new Int16Array(frameSamples);
    this.hasLastFrame = false;
    this.run = 0;
  }

  /** Consecutive frames concealed since the last good one. */
  get concealedRun(): number {
    return this.run;
  }

  /** True once the fade is over: further concealment is silence. */
  get faded(): boolean {
    return !this.hasLastFrame || this.run >= this.fadeFrames;
  }

  /** Copies a good frame from `source` at `offset` into `output` and remembers it. */
  play(source: Int16Array, offset: number, output: Int16Array): void {
    const last = this.lastFrame;
    for (let i = 0; i < this.frameSamples; i++) {
      const sample = source[offset + i]!;
      output[i] = sample;
      last[i] = sample;
    }
    this.hasLastFrame = true;
    this.run = 0;
  }

  /** Writes the next concealment frame into `output`. */
  conceal(output: Int16Array): void {
    const n = this.frameSamples;
    this.run++;
    if (this.hasLastFrame && this.run <= this.fadeFrames) {
      const last = this.lastFrame;
      const fadeSamples = this.fadeFrames * n;
      const start = (this.run - 1) * n;
      for (let i = 0; i < n; i++) {
        output[i] = Math.round((last[i]! * (fadeSamples - start - i - 1)) / fadeSamples);
      }
    } else {
      output.fill(0, 0, n);
    }
  }

  /** Forgets the last frame: concealment is silence until the next good frame. */
  reset(): void {
    this.hasLastFrame = false;
    this.run = 0;
  }
}
