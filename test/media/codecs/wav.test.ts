import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ParlaError } from '../../../src/core/errors.js';
import {
  decodeALaw,
  decodeMuLaw,
  encodeALaw,
  encodeMuLaw,
} from '../../../src/media/codecs/g711.js';
import { readWav, writeWav } from '../../../src/media/codecs/wav.js';

function sine(length: number, amplitude: number, cyclesPerSample: number): Int16Array {
  return Int16Array.from({ length }, (_, i) =>
    Math.round(amplitude * Math.sin(2 * Math.PI * cyclesPerSample * i)),
  );
}

function chunk(id: string, body: Uint8Array): Uint8Array {
  const out = new Uint8Array(8 + body.length + (body.length & 1));
  for (let i = 0; i < 4; i++) {
    out[i] = id.charCodeAt(i);
  }
  new DataView(out.buffer).setUint32(4, body.length, true);
  out.set(body, 8);
  return out;
}

function riff(...chunks: Uint8Array[]): Uint8Array {
  const size = chunks.reduce((n, c) => n + c.length, 4);
  const out = new Uint8Array(8 + size);
  out.set([0x52, 0x49, 0x46, 0x46], 0);
  new DataView(out.buffer).setUint32(4, size, true);
  out.set([0x57, 0x41, 0x56, 0x45], 8);
  let offset = 12;
  for (const c of chunks) {
    out.set(c, offset);
    offset += c.length;
  }
  return out;
}

function fmt(tag: number, channels: number, rate: number, bits: number, extra = 0): Uint8Array {
  const body = new Uint8Array(16 + extra);
  const view = new DataView(body.buffer);
  view.setUint16(0, tag, true);
  view.setUint16(2, channels, true);
  view.setUint32(4, rate, true);
  view.setUint32(8, (rate * channels * bits) / 8, true);
  view.setUint16(12, (channels * bits) / 8, true);
  view.setUint16(14, bits, true);
  return body;
}

function expectBadRequest(fn: () => unknown, message: RegExp): void {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ParlaError);
    expect((error as ParlaError).code).toBe('ERR_BAD_REQUEST');
    expect((error as ParlaError).message).toMatch(message);
    return;
  }
  throw new Error('expected an ERR_BAD_REQUEST');
}

describe('WAV', () => {
  it('reads a file written by Python’s wave module', () => {
    const bytes = readFileSync(
      new URL('../../fixtures/media/pcm16-stereo-8k-python-wave.wav', import.meta.url),
    );
    const wav = readWav(bytes);
    expect(wav.encoding).toBe('pcm16');
    expect(wav.channelCount).toBe(2);
    expect(wav.sampleRateHz).toBe(8000);
    expect(wav.frameCount).toBe(40);
    expect(wav.durationMs).toBe(5);
    for (let i = 0; i < 40; i++) {
      expect(wav.samples[2 * i]).toBe(i * 100 - 2000);
      expect(wav.samples[2 * i + 1]).toBe((-i * 37) | 0);
    }
  });

  it('round-trips PCM16 mono and stereo', () => {
    const mono = sine(1600, 20000, 440 / 16000);
    const wav = readWav(writeWav(mono, { sampleRateHz: 16000 }));
    expect(wav).toMatchObject({ encoding: 'pcm16', channelCount: 1, sampleRateHz: 16000 });
    expect(wav.samples).toEqual(mono);
    expect(wav.durationMs).toBe(100);

    const stereo = sine(960, 30000, 0.01);
    const file = writeWav(stereo, { sampleRateHz: 48000, channelCount: 2 });
    expect(file.length).toBe(44 + 960 * 2);
    const back = readWav(file);
    expect(back.channelCount).toBe(2);
    expect(back.frameCount).toBe(480);
    expect(back.samples).toEqual(stereo);
  });

  it('round-trips µ-law and A-law (format tags 7 and 6) through G.711', () => {
    const input = sine(800, 25000, 0.0371);
    for (const [encoding, tag] of [
      ['mulaw', 7],
      ['alaw', 6],
    ] as const) {
      const file = writeWav(input, { sampleRateHz: 8000, encoding });
      expect(new DataView(file.buffer).getUint16(20, true)).toBe(tag);
      const wav = readWav(file);
      expect(wav.encoding).toBe(encoding);
      expect(wav.data).toHaveLength(800);
      const codes = new Uint8Array(800);
      const expected = new Int16Array(800);
      if (encoding === 'mulaw') {
        encodeMuLaw(input, codes);
        decodeMuLaw(codes, expected);
      } else {
        encodeALaw(input, codes);
        decodeALaw(codes, expected);
      }
      expect(wav.data).toEqual(codes);
      expect(wav.samples).toEqual(expected);
    }
  });

  it('writes and reads an empty file; pads an odd-sized data chunk', () => {
    expect(readWav(writeWav(new Int16Array(0), { sampleRateHz: 8000 })).frameCount).toBe(0);
    const odd = writeWav(Int16Array.from([1, 2, 3]), { sampleRateHz: 8000, encoding: 'alaw' });
    expect(odd.length % 2).toBe(0);
    expect(readWav(odd).frameCount).toBe(3);
  });

  it('skips unknown chunks, odd-sized ones included, before and after fmt', () => {
    const pcm = Uint8Array.from([1, 0, 2, 0, 0xff, 0xff]);
    const file = riff(
      chunk('JUNK', new Uint8Array(3)),
      chunk('fmt ', fmt(1, 1, 8000, 16)),
      chunk('LIST', new TextEncoder().encode('INFOISFT\u0005\u0000\u0000\u0000parla')),
      chunk('data', pcm),
      chunk('id3 ', new Uint8Array(10)),
    );
    expect(Array.from(readWav(file).samples)).toEqual([1, 2, -1]);
  });

  it('reads WAVE_FORMAT_EXTENSIBLE headers and streaming data sizes', () => {
    const ext = fmt(0xfffe, 1, 8000, 8, 24);
    const view = new DataView(ext.buffer);
    view.setUint16(16, 22, true); // cbSize
    view.setUint16(24, 7, true); // sub-format GUID begins with the µ-law tag
    const codes = Uint8Array.from([0xff, 0x80, 0x00]);
    const wav = readWav(riff(chunk('fmt ', ext), chunk('data', codes)));
    expect(wav.encoding).toBe('mulaw');
    expect(Array.from(wav.samples)).toEqual([0, 32124, -32124]);

    const streamed = riff(chunk('fmt ', fmt(1, 1, 8000, 16)), chunk('data', new Uint8Array(4)));
    new DataView(streamed.buffer).setUint32(40, 0xffffffff, true);
    expect(readWav(streamed).frameCount).toBe(2);
  });

  it('rejects truncated files with the reason', () => {
    const whole = writeWav(sine(100, 1000, 0.01), { sampleRateHz: 8000 });
    expectBadRequest(() => readWav(whole.subarray(0, 8)), /shorter than a RIFF header/);
    expectBadRequest(() => readWav(whole.subarray(0, 30)), /truncated: the "fmt " chunk/);
    expectBadRequest(() => readWav(whole.subarray(0, 40)), /truncated chunk header/);
    expectBadRequest(
      () => readWav(whole.subarray(0, 101)),
      /truncated: the data chunk declares 200/,
    );
    const ragged = riff(chunk('fmt ', fmt(1, 2, 8000, 16)), chunk('data', new Uint8Array(6)));
    expectBadRequest(() => readWav(ragged), /not a whole number of 4-byte frames/);
    expectBadRequest(() => readWav(riff(chunk('fmt ', fmt(1, 1, 8000, 16)))), /no data chunk/);
    expectBadRequest(() => readWav(riff(chunk('data', new Uint8Array(2)))), /no fmt chunk/);
  });

  it('rejects what it does not support', () => {
    const data = chunk('data', new Uint8Array(12));
    expectBadRequest(() => readWav(riff(chunk('fmt ', fmt(3, 1, 8000, 32)), data)), /tag 3/);
    expectBadRequest(() => readWav(riff(chunk('fmt ', fmt(1, 1, 8000, 24)), data)), /24 bits/);
    expectBadRequest(() => readWav(riff(chunk('fmt ', fmt(1, 3, 8000, 16)), data)), /channel/);
    expectBadRequest(() => readWav(riff(chunk('fmt ', fmt(7, 1, 8000, 16)), data)), /tag 7/);
    const rifx = writeWav(new Int16Array(4), { sampleRateHz: 8000 });
    rifx[3] = 0x58;
    expectBadRequest(() => readWav(rifx), /RIFX files are not supported/);
    expectBadRequest(() => readWav(new TextEncoder().encode('ID3\u0004 not a wave file')), /RIFF/);
    const avi = writeWav(new Int16Array(4), { sampleRateHz: 8000 });
    avi.set([0x41, 0x56, 0x49, 0x20], 8);
    expectBadRequest(() => readWav(avi), /not WAVE/);
  });

  it('rejects bad write options as programmer errors', () => {
    expect(() => writeWav(new Int16Array(3), { sampleRateHz: 8000, channelCount: 2 })).toThrow(
      RangeError,
    );
    expect(() => writeWav(new Int16Array(2), { sampleRateHz: 0 })).toThrow(RangeError);
  });
});
