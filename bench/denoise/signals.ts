/**
 * Deterministic test signals and quality measures for the Fourier denoiser: seeded noises
 * (white, pink, babble from the committed fixture, a steady tone-rich "music" bed), mixing at a
 * given SNR, and SNR / segmental SNR against a clean reference. Shared by bench/denoise/snr.ts
 * and test/pipeline/denoise/.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { readWav } from '../../src/media/codecs/wav.js';

export const FIXTURE_DIR = fileURLToPath(new URL('../../test/fixtures/denoise/', import.meta.url));

/** Mono samples of a fixture WAV, as floats in PCM16 units, and its rate. */
export function loadFixture(name: string): { samples: Float64Array; sampleRateHz: number } {
  const wav = readWav(readFileSync(FIXTURE_DIR + name));
  if (wav.channelCount !== 1) {
    throw new Error(`${name} is not mono`);
  }
  return { samples: Float64Array.from(wav.samples), sampleRateHz: wav.sampleRateHz };
}

/** mulberry32: a small seeded PRNG, uniform in [0, 1). */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function gaussian(random: () => number): () => number {
  return () => {
    const u = 1 - random();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * random());
  };
}

export function rms(samples: Float64Array, start = 0, end = samples.length): number {
  let sum = 0;
  for (let i = start; i < end; i++) {
    sum += samples[i]! * samples[i]!;
  }
  return Math.sqrt(sum / Math.max(1, end - start));
}

/** Scales in place to the given RMS (PCM16 units); returns the array. */
export function normalize(samples: Float64Array, targetRms: number): Float64Array {
  const factor = targetRms / (rms(samples) || 1);
  for (let i = 0; i < samples.length; i++) {
    samples[i] = samples[i]! * factor;
  }
  return samples;
}

/** Gaussian white noise, unit RMS. */
export function whiteNoise(length: number, seed: number): Float64Array {
  const next = gaussian(seededRandom(seed));
  return normalize(
    Float64Array.from({ length }, () => next()),
    1,
  );
}

/**
 * Pink (−3 dB/octave) noise from white noise through Paul Kellet's filter, then a 2nd-order
 * Butterworth high-pass at `highPassHz` (default 60 Hz; 0 for none), unit RMS. Unfiltered, over
 * half of its power lies below 50 Hz, which no phone or voice codec carries.
 */
export function pinkNoise(
  length: number,
  sampleRateHz: number,
  seed: number,
  highPassHz = 60,
): Float64Array {
  const next = gaussian(seededRandom(seed));
  const out = new Float64Array(length);
  let b0 = 0;
  let b1 = 0;
  let b2 = 0;
  let b3 = 0;
  let b4 = 0;
  let b5 = 0;
  let b6 = 0;
  for (let i = 0; i < length; i++) {
    const w = next();
    b0 = 0.99886 * b0 + w * 0.0555179;
    b1 = 0.99332 * b1 + w * 0.0750759;
    b2 = 0.969 * b2 + w * 0.153852;
    b3 = 0.8665 * b3 + w * 0.3104856;
    b4 = 0.55 * b4 + w * 0.5329522;
    b5 = -0.7616 * b5 - w * 0.016898;
    out[i] = b0 + b1 + b2 + b3 + b4 + b5 + b6 + w * 0.5362;
    b6 = w * 0.115926;
  }
  if (highPassHz > 0) {
    highPass(out, highPassHz, sampleRateHz);
  }
  return normalize(out, 1);
}

/** In-place 2nd-order Butterworth high-pass (RBJ biquad). */
function highPass(samples: Float64Array, cornerHz: number, sampleRateHz: number): void {
  const w0 = (2 * Math.PI * cornerHz) / sampleRateHz;
  const alpha = Math.sin(w0) / Math.SQRT2;
  const cos = Math.cos(w0);
  const a0 = 1 + alpha;
  const b0 = (1 + cos) / 2 / a0;
  const b1 = -(1 + cos) / a0;
  const a1 = (-2 * cos) / a0;
  const a2 = (1 - alpha) / a0;
  let x1 = 0;
  let x2 = 0;
  let y1 = 0;
  let y2 = 0;
  for (let i = 0; i < samples.length; i++) {
    const x = samples[i]!;
    const y = b0 * x + b1 * x1 + b0 * x2 - a1 * y1 - a2 * y2;
    x2 = x1;
    x1 = x;
    y2 = y1;
    y1 = y;
    samples[i] = y;
  }
}

/** The babble fixture (four talkers) looped from a seeded start, unit RMS. */
export function babbleNoise(length: number, seed: number): Float64Array {
  const { samples } = loadFixture('babble-16k.wav');
  const start = Math.floor(seededRandom(seed)() * samples.length);
  return normalize(
    Float64Array.from({ length }, (_, i) => samples[(start + i) % samples.length]!),
    1,
  );
}

/**
 * A steady, tone-rich "music" bed: three-note chords of 8-harmonic tones (1/h amplitudes) with
 * slight vibrato, changing chord every 1.2 s with a 50 ms crossfade, unit RMS.
 */
export function musicNoise(length: number, sampleRateHz: number, seed: number): Float64Array {
  const random = seededRandom(seed);
  const scale = [0, 2, 4, 5, 7, 9, 11, 12, 14, 16];
  const chordSamples = Math.round(1.2 * sampleRateHz);
  const fade = Math.round(0.05 * sampleRateHz);
  const out = new Float64Array(length);
  const chordCount = Math.ceil(length / chordSamples) + 1;
  for (let c = 0; c < chordCount; c++) {
    const start = c * chordSamples - fade;
    const root = 48 + Math.floor(random() * 12);
    const notes = [0, 2, 4].map((step) => root + scale[(step + Math.floor(random() * 3)) % 10]!);
    for (const note of notes) {
      const f0 = 440 * Math.pow(2, (note - 69) / 12);
      const phase = random() * 2 * Math.PI;
      for (let i = Math.max(0, start); i < Math.min(length, start + chordSamples + fade); i++) {
        const t = (i - start) / sampleRateHz;
        const inFade = Math.min(1, (i - start) / fade, (start + chordSamples + fade - i) / fade);
        const vibrato = 1 + 0.003 * Math.sin(2 * Math.PI * 5 * t);
        let value = 0;
        for (let h = 1; h <= 8 && h * f0 < sampleRateHz / 2; h++) {
          value += Math.sin(2 * Math.PI * h * f0 * vibrato * t + h * phase) / h;
        }
        out[i] = out[i]! + inFade * value;
      }
    }
  }
  return normalize(out, 1);
}

export type NoiseKind = 'white' | 'pink' | 'babble' | 'music';

export function makeNoise(
  kind: NoiseKind,
  length: number,
  sampleRateHz: number,
  seed: number,
): Float64Array {
  switch (kind) {
    case 'white':
      return whiteNoise(length, seed);
    case 'pink':
      return pinkNoise(length, sampleRateHz, seed);
    case 'babble':
      return babbleNoise(length, seed);
    case 'music':
      return musicNoise(length, sampleRateHz, seed);
  }
}

export function toPcm16(samples: Float64Array): Int16Array {
  return Int16Array.from(samples, (v) => Math.max(-32768, Math.min(32767, Math.round(v))));
}

/** 10·log10(Σ reference² / Σ (reference − test)²) with test delayed by `lag`, from `start`. */
export function snrDb(
  reference: Float64Array,
  test: ArrayLike<number>,
  lag: number,
  start = 0,
  end = reference.length,
): number {
  let signal = 0;
  let error = 0;
  for (let i = start; i < end && i + lag < test.length; i++) {
    const r = reference[i]!;
    const e = r - test[i + lag]!;
    signal += r * r;
    error += e * e;
  }
  return 10 * Math.log10(signal / error);
}

/**
 * Segmental SNR: the mean over 20 ms frames of the frame SNR clamped to [−10, 35] dB, taken over
 * the frames where the reference is active (within 40 dB of its loudest frame).
 */
export function segmentalSnrDb(
  reference: Float64Array,
  test: ArrayLike<number>,
  lag: number,
  sampleRateHz: number,
  start = 0,
  end = reference.length,
): number {
  const frame = Math.round(sampleRateHz / 50);
  const energies: { signal: number; error: number }[] = [];
  for (let f = start; f + frame <= end && f + frame + lag <= test.length; f += frame) {
    let signal = 0;
    let error = 0;
    for (let i = f; i < f + frame; i++) {
      const e = reference[i]! - test[i + lag]!;
      signal += reference[i]! * reference[i]!;
      error += e * e;
    }
    energies.push({ signal, error });
  }
  const loudest = Math.max(...energies.map((e) => e.signal));
  const active = energies.filter((e) => e.signal > loudest * 1e-4);
  const sum = active.reduce((acc, e) => {
    const snr = 10 * Math.log10(e.signal / Math.max(e.error, 1e-9));
    return acc + Math.max(-10, Math.min(35, snr));
  }, 0);
  return sum / active.length;
}
