import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { G722Decoder, G722Encoder } from '../../../src/media/codecs/g722.js';
import { pcm16leView } from '../../../src/media/codecs/pcm16.js';

/*
 * The fixtures in test/fixtures/media/g722 were made with FFmpeg's G.722 encoder and decoder (an
 * independent implementation); README.md there has the commands.
 */
function fixtureBytes(name: string): Uint8Array {
  return new Uint8Array(
    readFileSync(new URL(`../../fixtures/media/g722/${name}`, import.meta.url)),
  );
}

function fixturePcm(name: string): Int16Array {
  return pcm16leView(fixtureBytes(name));
}

/** Index of the first element where a and b differ, or -1 if they are equal. */
function firstDifference(a: ArrayLike<number>, b: ArrayLike<number>): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    if (a[i] !== b[i]) {
      return i;
    }
  }
  return a.length === b.length ? -1 : length;
}

function encodeAll(pcm: Int16Array, encoder = new G722Encoder()): Uint8Array {
  const bytes = new Uint8Array(pcm.length / 2);
  expect(encoder.encode(pcm, 0, pcm.length, bytes, 0)).toBe(bytes.length);
  return bytes;
}

function decodeAll(bytes: Uint8Array, decoder = new G722Decoder()): Int16Array {
  const pcm = new Int16Array(bytes.length * 2);
  expect(decoder.decode(bytes, 0, bytes.length, pcm, 0)).toBe(pcm.length);
  return pcm;
}

function sine(frequencyHz: number, amplitude: number, length = 16000): Int16Array {
  return Int16Array.from({ length }, (_, i) =>
    Math.round(amplitude * Math.sin((2 * Math.PI * frequencyHz * i) / 16000)),
  );
}

/** SNR in dB of `output` against `input` delayed by `delay` samples, from sample `skip` on. */
function snrDb(input: Int16Array, output: Int16Array, delay: number, skip: number): number {
  let signal = 0;
  let noise = 0;
  for (let i = skip; i + delay < output.length; i++) {
    signal += input[i]! ** 2;
    noise += (output[i + delay]! - input[i]!) ** 2;
  }
  return 10 * Math.log10(signal / noise);
}

/** Encodes in chunks of the given sample counts, cycling through them. */
function encodeInChunks(pcm: Int16Array, chunkSamples: number[]): Uint8Array {
  const encoder = new G722Encoder();
  const bytes = new Uint8Array(pcm.length / 2);
  for (let offset = 0, k = 0; offset < pcm.length; k++) {
    const count = Math.min(chunkSamples[k % chunkSamples.length]!, pcm.length - offset);
    expect(encoder.encode(pcm, offset, count, bytes, offset / 2)).toBe(count / 2);
    offset += count;
  }
  return bytes;
}

function decodeInChunks(bytes: Uint8Array, chunkBytes: number[]): Int16Array {
  const decoder = new G722Decoder();
  const pcm = new Int16Array(bytes.length * 2);
  for (let offset = 0, k = 0; offset < bytes.length; k++) {
    const count = Math.min(chunkBytes[k % chunkBytes.length]!, bytes.length - offset);
    expect(decoder.decode(bytes, offset, count, pcm, offset * 2)).toBe(count * 2);
    offset += count;
  }
  return pcm;
}

/** The QMF analysis and synthesis filters together delay the signal by 22 samples (1.375 ms). */
const CODEC_DELAY_SAMPLES = 22;
/** Skipped before measuring SNR: the ADPCM step sizes start small and take a few ms to adapt. */
const ADAPTATION_SAMPLES = 800;

const speech = fixturePcm('speech-in.raw');
const loud = fixturePcm('loud-in.raw');

describe('G.722 against FFmpeg (bit-exact)', () => {
  it('encodes speech and clipping sweeps, square waves and noise to the same octets', () => {
    for (const name of ['speech', 'loud']) {
      const input = fixturePcm(`${name}-in.raw`);
      const expected = fixtureBytes(`${name}.g722`);
      expect(expected.length).toBe(input.length / 2);
      expect(firstDifference(encodeAll(input), expected)).toBe(-1);
    }
    expect(speech.length).toBe(16000);
    // The loud input reaches full scale, so saturation in the QMF and quantisers is exercised.
    expect(Math.min(...loud)).toBe(-32768);
    expect(Math.max(...loud)).toBe(32767);
  });

  it('decodes FFmpeg-encoded octets and random octets to the same samples', () => {
    for (const name of ['speech', 'loud', 'random']) {
      const expected = fixturePcm(`${name}-ffmpeg.raw`);
      const bytes = fixtureBytes(`${name}.g722`);
      expect(expected.length).toBe(bytes.length * 2);
      expect(firstDifference(decodeAll(bytes), expected)).toBe(-1);
    }
    // Random octets include the lower-band codes 0…3 that no encoder sends.
    const random = fixtureBytes('random.g722');
    expect(random.some((octet) => (octet & 63) < 4)).toBe(true);
  });
});

describe('G.722 round trip', () => {
  it('delays by 22 samples and keeps speech above 25 dB SNR', () => {
    const output = decodeAll(encodeAll(speech));
    let bestDelay = -1;
    let bestSnr = -Infinity;
    for (let delay = 0; delay <= 40; delay++) {
      const snr = snrDb(speech, output, delay, ADAPTATION_SAMPLES);
      if (snr > bestSnr) {
        bestSnr = snr;
        bestDelay = delay;
      }
    }
    expect(bestDelay).toBe(CODEC_DELAY_SAMPLES);
    expect(bestSnr).toBeGreaterThan(25); // 29.2 dB measured
  });

  it('keeps a lower-band and an upper-band sine above 40 and 22 dB SNR', () => {
    const lowTone = sine(1000, 10000);
    const highTone = sine(6000, 8000);
    // 47.4 and 27.0 dB measured; the upper band has only 2 bits per sample.
    expect(
      snrDb(lowTone, decodeAll(encodeAll(lowTone)), CODEC_DELAY_SAMPLES, ADAPTATION_SAMPLES),
    ).toBeGreaterThan(40);
    expect(
      snrDb(highTone, decodeAll(encodeAll(highTone)), CODEC_DELAY_SAMPLES, ADAPTATION_SAMPLES),
    ).toBeGreaterThan(22);
  });
});

describe('G.722 streaming state', () => {
  it('gives the same octets whatever the chunk size', () => {
    const whole = encodeAll(speech);
    expect(firstDifference(encodeInChunks(speech, [2]), whole)).toBe(-1);
    expect(firstDifference(encodeInChunks(speech, [320]), whole)).toBe(-1);
    // Uneven sizes that cross the encoder's internal window wrap at different points.
    expect(firstDifference(encodeInChunks(speech, [2, 318, 1024, 34, 0, 1200]), whole)).toBe(-1);
  });

  it('gives the same samples whatever the chunk size', () => {
    const bytes = fixtureBytes('speech.g722');
    const whole = decodeAll(bytes);
    expect(firstDifference(decodeInChunks(bytes, [1]), whole)).toBe(-1);
    expect(firstDifference(decodeInChunks(bytes, [160]), whole)).toBe(-1);
    expect(firstDifference(decodeInChunks(bytes, [1, 159, 512, 17, 0, 600]), whole)).toBe(-1);
  });

  it('starts a new stream after reset()', () => {
    const encoder = new G722Encoder();
    const fresh = encodeAll(speech);
    encodeAll(loud, encoder);
    expect(firstDifference(encodeAll(speech, encoder), fresh)).not.toBe(-1);
    encoder.reset();
    expect(firstDifference(encodeAll(speech, encoder), fresh)).toBe(-1);

    const decoder = new G722Decoder();
    const decodedFresh = decodeAll(fresh);
    decodeAll(fixtureBytes('random.g722'), decoder);
    expect(firstDifference(decodeAll(fresh, decoder), decodedFresh)).not.toBe(-1);
    decoder.reset();
    expect(firstDifference(decodeAll(fresh, decoder), decodedFresh)).toBe(-1);
  });
});

describe('G.722 arguments', () => {
  it('reads and writes at the given offsets only', () => {
    const encoder = new G722Encoder();
    const out = new Uint8Array(164).fill(0xee);
    expect(encoder.encode(speech, 2000, 320, out, 2)).toBe(160);
    expect(Array.from(out.subarray(0, 2))).toEqual([0xee, 0xee]);
    expect(Array.from(out.subarray(162))).toEqual([0xee, 0xee]);
    expect(firstDifference(out.subarray(2, 162), encodeAll(speech.slice(2000, 2320)))).toBe(-1);

    const decoder = new G722Decoder();
    const pcm = new Int16Array(324).fill(-7);
    expect(decoder.decode(out, 2, 160, pcm, 2)).toBe(320);
    expect(Array.from(pcm.subarray(0, 2))).toEqual([-7, -7]);
    expect(Array.from(pcm.subarray(322))).toEqual([-7, -7]);
    expect(firstDifference(pcm.subarray(2, 322), decodeAll(out.subarray(2, 162)))).toBe(-1);
    expect(encoder.encode(speech, 16000, 0, out, 164)).toBe(0);
    expect(decoder.decode(out, 164, 0, pcm, 324)).toBe(0);
  });

  it('rejects bad ranges and odd sample counts with a RangeError, and keeps its state', () => {
    const encoder = new G722Encoder();
    const bytes = new Uint8Array(8000);
    encoder.encode(speech, 0, 8000, bytes, 0);
    const out = new Uint8Array(10);
    expect(() => encoder.encode(speech, 0, 3, out, 0)).toThrow(RangeError);
    expect(() => encoder.encode(speech, -2, 2, out, 0)).toThrow(RangeError);
    expect(() => encoder.encode(speech, 15998, 4, out, 0)).toThrow(RangeError);
    expect(() => encoder.encode(speech, 0, 22, out, 0)).toThrow(RangeError);
    expect(() => encoder.encode(speech, 0, 2, out, 10)).toThrow(RangeError);
    expect(() => encoder.encode(speech, 0.5, 2, out, 0)).toThrow(RangeError);
    expect(() => encoder.encode(speech, 0, 2, out, Number.NaN)).toThrow(RangeError);
    encoder.encode(speech, 8000, 8000, bytes, 4000);
    expect(firstDifference(bytes, fixtureBytes('speech.g722'))).toBe(-1);

    const decoder = new G722Decoder();
    const pcm = new Int16Array(16000);
    decoder.decode(bytes, 0, 4000, pcm, 0);
    const small = new Int16Array(10);
    expect(() => decoder.decode(bytes, 0, 6, small, 0)).toThrow(RangeError);
    expect(() => decoder.decode(bytes, 0, 5, small, 1)).toThrow(RangeError);
    expect(() => decoder.decode(bytes, 7999, 2, small, 0)).toThrow(RangeError);
    expect(() => decoder.decode(bytes, -1, 1, small, 0)).toThrow(RangeError);
    expect(() => decoder.decode(bytes, 0, 1.5, small, 0)).toThrow(RangeError);
    decoder.decode(bytes, 4000, 4000, pcm, 8000);
    expect(firstDifference(pcm, fixturePcm('speech-ffmpeg.raw'))).toBe(-1);
  });
});
