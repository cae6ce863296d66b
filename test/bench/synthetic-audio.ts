import type { AudioChunk } from '../../bench/harness/measure-turns.js';

/** Synthetic audio for the harness's own tests: exact tones, noise and timelines. */
export const RATE_HZ = 16_000;
export const FRAME_MS = 20;
const FRAME_SAMPLES = (RATE_HZ * FRAME_MS) / 1000;

/** A 16 kHz signal of `totalMs`, silent except for the given bursts (tone, or noise when seeded). */
export function signal(
  totalMs: number,
  bursts: readonly { fromMs: number; toMs: number; kind?: 'tone' | 'noise' }[],
  amplitude = 8000,
): Int16Array {
  const samples = new Int16Array(Math.round((totalMs * RATE_HZ) / 1000));
  let seed = 12345;
  for (const burst of bursts) {
    const from = Math.round((burst.fromMs * RATE_HZ) / 1000);
    const to = Math.min(samples.length, Math.round((burst.toMs * RATE_HZ) / 1000));
    for (let i = from; i < to; i++) {
      if (burst.kind === 'noise') {
        seed = (seed * 1103515245 + 12345) >>> 0;
        samples[i] = Math.round(((seed / 0xffffffff) * 2 - 1) * amplitude);
      } else {
        samples[i] = Math.round(Math.sin((2 * Math.PI * 440 * i) / RATE_HZ) * amplitude);
      }
    }
  }
  return samples;
}

/** Seeded jitter source in [0, maxMs). */
export function jitter(maxMs: number, seed = 7): () => number {
  let state = seed;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return (state / 0x100000000) * maxMs;
  };
}

export interface TimelineOptions {
  /** Time of the signal's first sample. */
  startMs?: number;
  /** Added to each chunk's nominal arrival (in-order delivery is kept). */
  delayMs?: (frameIndex: number) => number;
  /** Frames never delivered. */
  drop?: (frameIndex: number) => boolean;
}

/** Cuts a signal into 20 ms chunks arriving in order, at their nominal time plus any delay. */
export function timeline(samples: Int16Array, options: TimelineOptions = {}): AudioChunk[] {
  const chunks: AudioChunk[] = [];
  const startMs = options.startMs ?? 0;
  let previousMs = Number.NEGATIVE_INFINITY;
  for (let k = 0; k * FRAME_SAMPLES < samples.length; k++) {
    if (options.drop?.(k) === true) {
      continue;
    }
    const nominalMs = startMs + k * FRAME_MS + (options.delayMs?.(k) ?? 0);
    const atMs = Math.max(nominalMs, previousMs);
    previousMs = atMs;
    chunks.push({ atMs, samples: samples.subarray(k * FRAME_SAMPLES, (k + 1) * FRAME_SAMPLES) });
  }
  return chunks;
}
