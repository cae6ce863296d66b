import { checkRange } from '../check-range.js';
import { samplesPerFrame, type AudioFrame, type FrameDurationMs } from '../audio-frame.js';

/** Receives each full frame. The frame and its samples are reused: copy them to keep them. */
export type FrameSink = (frame: AudioFrame) => void;

export interface FrameChunkerOptions {
  sampleRateHz: number;
  frameDurationMs: FrameDurationMs;
  /** Presentation time of the first frame; later frames advance by frameDurationMs. Default 0. */
  startPtsMs?: number;
}

/**
 * Cuts a stream of mono PCM16 audio, arriving in pieces of any size, into fixed 10 or 20 ms
 * frames. Input is an Int16Array or little-endian PCM16 bytes; a trailing odd byte is held until
 * the next push. Full frames go to the sink, synchronously, in one reused frame object; nothing is
 * allocated per push. The sink must not push into the same chunker.
 */
export class FrameChunker {
  readonly sampleRateHz: number;
  readonly frameDurationMs: FrameDurationMs;
  readonly frameSamples: number;
  private readonly sink: FrameSink;
  private readonly frame: AudioFrame;
  /** Samples already in frame.samples. */
  private fill: number;
  /** The low byte of a sample whose high byte has not arrived, or -1. */
  private carryByte: number;
  private startPtsMs: number;
  private framesEmitted: number;

  constructor(options: FrameChunkerOptions, sink: FrameSink) {
    this.sampleRateHz = options.sampleRateHz;
    this.frameDurationMs = options.frameDurationMs;
    this.frameSamples = samplesPerFrame(options.sampleRateHz, options.frameDurationMs);
    this.sink = sink;
    this.frame = {
      samples: new Int16Array(this.frameSamples),
      sampleRateHz: options.sampleRateHz,
      ptsMs: 0,
    };
    this.fill = 0;
    this.carryByte = -1;
    this.startPtsMs = options.startPtsMs ?? 0;
    this.framesEmitted = 0;
  }

  /** Samples waiting for a frame to fill up. */
  get pendingSamples(): number {
    return this.fill;
  }

  /** True while an odd byte waits for its partner. */
  get hasCarryByte(): boolean {
    return this.carryByte >= 0;
  }

  /** Frames emitted since construction or the last reset(). */
  get frameCount(): number {
    return this.framesEmitted;
  }

  /** Appends samples; returns the number of frames emitted. */
  pushSamples(samples: Int16Array, offset = 0, length = samples.length - offset): number {
    checkRange(samples.length, offset, length);
    if (this.carryByte >= 0) {
      throw new RangeError('an odd byte is pending from pushBytes(); push the rest as bytes');
    }
    const out = this.frame.samples;
    const frameSamples = this.frameSamples;
    let emitted = 0;
    let i = offset;
    const end = offset + length;
    while (i < end) {
      const room = frameSamples - this.fill;
      const n = end - i < room ? end - i : room;
      let fill = this.fill;
      for (let k = 0; k < n; k++) {
        out[fill++] = samples[i + k]!;
      }
      i += n;
      this.fill = fill;
      if (fill === frameSamples) {
        this.emit();
        emitted++;
      }
    }
    return emitted;
  }

  /**
   * Appends little-endian PCM16 bytes of any length, odd included; returns the number of frames
   * emitted.
   */
  pushBytes(bytes: Uint8Array, offset = 0, length = bytes.length - offset): number {
    checkRange(bytes.length, offset, length);
    const out = this.frame.samples;
    const frameSamples = this.frameSamples;
    let emitted = 0;
    let i = offset;
    const end = offset + length;
    if (this.carryByte >= 0 && i < end) {
      out[this.fill++] = ((this.carryByte | (bytes[i]! << 8)) << 16) >> 16;
      this.carryByte = -1;
      i++;
      if (this.fill === frameSamples) {
        this.emit();
        emitted++;
      }
    }
    while (end - i >= 2) {
      const room = frameSamples - this.fill;
      const pairs = (end - i) >> 1;
      const n = pairs < room ? pairs : room;
      let fill = this.fill;
      for (let k = 0; k < n; k++) {
        out[fill++] = ((bytes[i]! | (bytes[i + 1]! << 8)) << 16) >> 16;
        i += 2;
      }
      this.fill = fill;
      if (fill === frameSamples) {
        this.emit();
        emitted++;
      }
    }
    if (i < end) {
      this.carryByte = bytes[i]!;
    }
    return emitted;
  }

  /**
   * Emits the partial frame, padded with silence, if there is one; drops a pending odd byte.
   * Returns true when a frame was emitted.
   */
  flush(): boolean {
    this.carryByte = -1;
    if (this.fill === 0) {
      return false;
    }
    this.frame.samples.fill(0, this.fill);
    this.emit();
    return true;
  }

  /** Drops pending input and restarts presentation times at `startPtsMs`. */
  reset(startPtsMs = 0): void {
    this.fill = 0;
    this.carryByte = -1;
    this.startPtsMs = startPtsMs;
    this.framesEmitted = 0;
  }

  private emit(): void {
    this.frame.ptsMs = this.startPtsMs + this.framesEmitted * this.frameDurationMs;
    this.framesEmitted++;
    this.fill = 0;
    this.sink(this.frame);
  }
}
