import { describe, expect, it } from 'vitest';
import type { AudioFrame, FrameDurationMs } from '../../../src/media/audio-frame.js';
import { FrameChunker } from '../../../src/media/framing/frame-chunker.js';

/** A deterministic PRNG (mulberry32) so failures reproduce. */
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

function collector(rate: number, durationMs: FrameDurationMs, startPtsMs?: number) {
  const frames: { samples: number[]; ptsMs: number; sampleRateHz: number }[] = [];
  const frameObjects = new Set<AudioFrame>();
  const options = startPtsMs === undefined ? {} : { startPtsMs };
  const chunker = new FrameChunker(
    { sampleRateHz: rate, frameDurationMs: durationMs, ...options },
    (f) => {
      frameObjects.add(f);
      frames.push({ samples: Array.from(f.samples), ptsMs: f.ptsMs, sampleRateHz: f.sampleRateHz });
    },
  );
  return { chunker, frames, frameObjects };
}

function signal(length: number, next: () => number): Int16Array {
  return Int16Array.from({ length }, () => Math.floor(next() * 65536) - 32768);
}

function toBytes(samples: Int16Array): Uint8Array {
  const bytes = new Uint8Array(samples.length * 2);
  for (let i = 0; i < samples.length; i++) {
    bytes[2 * i] = samples[i]! & 0xff;
    bytes[2 * i + 1] = (samples[i]! >> 8) & 0xff;
  }
  return bytes;
}

describe('FrameChunker', () => {
  it('cuts Int16 input of random sizes into exact 20 ms frames with advancing pts', () => {
    const next = random(1);
    const input = signal(16000, next);
    const { chunker, frames, frameObjects } = collector(16000, 20, 1000);
    let offset = 0;
    let emitted = 0;
    while (offset < input.length) {
      const n = Math.min(input.length - offset, Math.floor(next() * 700));
      emitted += chunker.pushSamples(input, offset, n);
      offset += n;
    }
    expect(emitted).toBe(50);
    expect(frames).toHaveLength(50);
    frames.forEach((frame, k) => {
      expect(frame.ptsMs).toBe(1000 + 20 * k);
      expect(frame.sampleRateHz).toBe(16000);
      expect(frame.samples).toEqual(Array.from(input.subarray(320 * k, 320 * (k + 1))));
    });
    expect(frameObjects.size).toBe(1); // one reused frame object
    expect(chunker.pendingSamples).toBe(0);
  });

  it('decodes PCM16LE bytes pushed in odd-sized pieces, down to one byte', () => {
    const next = random(2);
    const input = signal(441 * 7 + 100, next);
    const bytes = toBytes(input);
    const { chunker, frames } = collector(44100, 10);
    let offset = 0;
    while (offset < bytes.length) {
      const n = Math.min(
        bytes.length - offset,
        1 + Math.floor(next() * 9) * 2 * (next() < 0.5 ? 1 : 37),
      );
      chunker.pushBytes(bytes, offset, n);
      offset += n;
    }
    expect(frames).toHaveLength(7);
    frames.forEach((frame, k) => {
      expect(frame.samples).toEqual(Array.from(input.subarray(441 * k, 441 * (k + 1))));
    });
    expect(chunker.pendingSamples).toBe(100);
    expect(chunker.hasCarryByte).toBe(false);
  });

  it('carries an odd byte across pushes, including across a frame boundary', () => {
    const { chunker, frames } = collector(8000, 10);
    const input = Int16Array.from({ length: 80 }, (_, i) => (i % 2 ? -1 : 1) * (i * 411));
    const bytes = toBytes(input);
    expect(chunker.pushBytes(bytes, 0, 159)).toBe(0);
    expect(chunker.hasCarryByte).toBe(true);
    expect(chunker.pendingSamples).toBe(79);
    expect(chunker.pushBytes(bytes, 159, 1)).toBe(1);
    expect(frames[0]!.samples).toEqual(Array.from(input));
    chunker.pushBytes(bytes, 0, 1);
    expect(() => chunker.pushSamples(input)).toThrow(/odd byte is pending/);
  });

  it('emits nothing for empty input and pads the tail on flush', () => {
    const { chunker, frames } = collector(8000, 20);
    expect(chunker.pushSamples(new Int16Array(0))).toBe(0);
    expect(chunker.pushBytes(new Uint8Array(0))).toBe(0);
    expect(chunker.flush()).toBe(false);
    chunker.pushSamples(Int16Array.from([5, 6, 7]));
    chunker.pushBytes(Uint8Array.from([9]));
    expect(chunker.flush()).toBe(true);
    expect(frames).toHaveLength(1);
    expect(frames[0]!.samples.slice(0, 4)).toEqual([5, 6, 7, 0]);
    expect(frames[0]!.samples).toHaveLength(160);
    expect(chunker.hasCarryByte).toBe(false);
    chunker.reset(500);
    chunker.pushSamples(new Int16Array(160));
    expect(frames[1]!.ptsMs).toBe(500);
    expect(chunker.frameCount).toBe(1);
  });

  it('emits several frames from one large push', () => {
    const { chunker, frames } = collector(48000, 20);
    expect(chunker.pushSamples(new Int16Array(960 * 5 + 1))).toBe(5);
    expect(frames.map((f) => f.ptsMs)).toEqual([0, 20, 40, 60, 80]);
    expect(chunker.pendingSamples).toBe(1);
  });

  it('rejects out-of-range slices', () => {
    const { chunker } = collector(8000, 20);
    expect(() => chunker.pushSamples(new Int16Array(4), 3, 2)).toThrow(RangeError);
    expect(() => chunker.pushBytes(new Uint8Array(4), -1, 2)).toThrow(RangeError);
  });
});
