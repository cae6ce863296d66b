/**
 * The unit of audio that moves through the voice pipeline: a block of mono PCM16 samples, its
 * sample rate, and its presentation time. Frames are 10 ms or 20 ms long.
 *
 * Producers on hot paths reuse one frame object and one sample buffer: a consumer that keeps a
 * frame past the call that handed it over must copy the samples.
 */
export interface AudioFrame {
  /** Mono signed 16-bit samples. */
  samples: Int16Array;
  sampleRateHz: number;
  /** Presentation time of the first sample, in milliseconds on the stream's clock. */
  ptsMs: number;
}

/** The frame durations the pipeline works in. */
export type FrameDurationMs = 10 | 20;

/** The sample rates the media primitives support. */
export const SAMPLE_RATES_HZ = [8000, 12000, 16000, 24000, 44100, 48000] as const;
export type SampleRateHz = (typeof SAMPLE_RATES_HZ)[number];

export function isSupportedSampleRate(sampleRateHz: number): sampleRateHz is SampleRateHz {
  return (SAMPLE_RATES_HZ as readonly number[]).includes(sampleRateHz);
}

/** Samples in one frame: 80/160 at 8 kHz, 160/320 at 16 kHz, 441/882 at 44.1 kHz, 480/960 at 48 kHz. */
export function samplesPerFrame(sampleRateHz: number, frameDurationMs: FrameDurationMs): number {
  if (frameDurationMs !== 10 && frameDurationMs !== 20) {
    throw new RangeError(`frame duration must be 10 or 20 ms, got ${String(frameDurationMs)}`);
  }
  const samples = (sampleRateHz * frameDurationMs) / 1000;
  if (!Number.isInteger(samples) || samples <= 0) {
    throw new RangeError(
      `${frameDurationMs} ms at ${sampleRateHz} Hz is not a whole number of samples`,
    );
  }
  return samples;
}

/** Duration in milliseconds of `sampleCount` samples at `sampleRateHz`. */
export function durationMsOf(sampleCount: number, sampleRateHz: number): number {
  return (sampleCount * 1000) / sampleRateHz;
}

/** A zeroed frame of the given duration. Allocates: call it at set-up, not per frame. */
export function createAudioFrame(
  sampleRateHz: number,
  frameDurationMs: FrameDurationMs,
  ptsMs = 0,
): AudioFrame {
  return {
    samples: new Int16Array(samplesPerFrame(sampleRateHz, frameDurationMs)),
    sampleRateHz,
    ptsMs,
  };
}
