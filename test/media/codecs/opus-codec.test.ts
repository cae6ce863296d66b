import { describe, expect, it } from 'vitest';
import { ParlaError } from '../../../src/core/errors.js';
import { OpusCodec, type OpusSampleRateHz } from '../../../src/media/codecs/opus-codec.js';

/** Amplitude of the `frequencyHz` component of `samples`, by correlation (a one-bin DFT). */
function toneAmplitude(samples: Int16Array, frequencyHz: number, sampleRateHz: number): number {
  let re = 0;
  let im = 0;
  for (let i = 0; i < samples.length; i++) {
    const phase = (2 * Math.PI * frequencyHz * i) / sampleRateHz;
    re += samples[i]! * Math.cos(phase);
    im += samples[i]! * Math.sin(phase);
  }
  return (2 * Math.hypot(re, im)) / samples.length;
}

describe('OpusCodec', () => {
  const rates: OpusSampleRateHz[] = [8000, 12000, 16000, 24000, 48000];

  it.each(rates)('carries a 20 ms-framed tone through encode and decode at %i Hz', (rate) => {
    const codec = new OpusCodec({ sampleRateHz: rate, bitrateBps: 32000 });
    expect(codec.frameSamples).toBe(rate / 50);
    const frames = 50;
    const toneHz = 500;
    const amplitude = 10000;
    const decoded = new Int16Array(frames * codec.frameSamples);
    const frame = new Int16Array(codec.frameSamples);
    let packetBytes = 0;
    for (let f = 0; f < frames; f++) {
      for (let i = 0; i < frame.length; i++) {
        const n = f * frame.length + i;
        frame[i] = Math.round(amplitude * Math.sin((2 * Math.PI * toneHz * n) / rate));
      }
      const packet = codec.encode(frame);
      packetBytes += packet.length;
      expect(codec.decode(packet, decoded, f * codec.frameSamples)).toBe(codec.frameSamples);
    }
    // Average packet size follows the bitrate: 32 kbit/s is 80 bytes per 20 ms.
    expect(packetBytes / frames).toBeGreaterThan(40);
    expect(packetBytes / frames).toBeLessThan(120);
    // After the first 200 ms (encoder start-up), the tone is there at close to its level and
    // other content is small.
    const steady = decoded.subarray(10 * codec.frameSamples);
    const level = toneAmplitude(steady, toneHz, rate);
    expect(20 * Math.log10(level / amplitude)).toBeGreaterThan(-0.5);
    expect(20 * Math.log10(level / amplitude)).toBeLessThan(0.5);
    expect(toneAmplitude(steady, toneHz * 2.5, rate)).toBeLessThan(amplitude / 1000);
  });

  it('encodes from an offset and decodes packets from a plain Uint8Array', () => {
    const codec = new OpusCodec({ sampleRateHz: 16000 });
    const samples = new Int16Array(400);
    const packet = codec.encode(samples, 80);
    const copy = new Uint8Array(packet.length + 1).subarray(1);
    copy.set(packet);
    const out = new Int16Array(320);
    expect(codec.decode(copy, out)).toBe(320);
    expect(() => codec.encode(samples, 81)).toThrow(RangeError);
  });

  it('raises ERR_BAD_REQUEST for empty, corrupt and oversized packets', () => {
    const codec = new OpusCodec({ sampleRateHz: 8000 });
    const out = new Int16Array(codec.maxDecodedSamples);
    expect(() => codec.decode(new Uint8Array(0), out)).toThrow(ParlaError);
    expect(() => codec.decode(Uint8Array.from([0xff, 0xff]), out)).toThrow(/corrupt Opus packet/);
    const packet = codec.encode(new Int16Array(160));
    expect(() => codec.decode(packet, new Int16Array(100))).toThrow(/more than the 100/);
  });

  it('rejects rates Opus does not run at', () => {
    expect(() => new OpusCodec({ sampleRateHz: 44100 as OpusSampleRateHz })).toThrow(RangeError);
    expect(() => new OpusCodec({ sampleRateHz: 16000, bitrateBps: 100 })).toThrow(RangeError);
  });
});
