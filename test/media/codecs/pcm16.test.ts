import { describe, expect, it } from 'vitest';
import { ParlaError } from '../../../src/core/errors.js';
import {
  HOST_IS_LITTLE_ENDIAN,
  downmixToMono,
  pcm16leBytes,
  pcm16leView,
  readPcm16be,
  readPcm16le,
  writePcm16be,
  writePcm16le,
} from '../../../src/media/codecs/pcm16.js';

describe('pcm16', () => {
  const samples = Int16Array.from([0, 1, -1, 256, -256, 32767, -32768, 0x1234]);
  const littleEndian = Uint8Array.from([
    0x00, 0x00, 0x01, 0x00, 0xff, 0xff, 0x00, 0x01, 0x00, 0xff, 0xff, 0x7f, 0x00, 0x80, 0x34, 0x12,
  ]);

  it('decodes and encodes little-endian bytes', () => {
    const out = new Int16Array(8);
    expect(readPcm16le(littleEndian, out)).toBe(8);
    expect(out).toEqual(samples);
    const bytes = new Uint8Array(16);
    expect(writePcm16le(samples, bytes)).toBe(16);
    expect(bytes).toEqual(littleEndian);
  });

  it('decodes and encodes big-endian (RTP L16) bytes', () => {
    const bigEndian = new Uint8Array(16);
    for (let i = 0; i < 16; i += 2) {
      bigEndian[i] = littleEndian[i + 1]!;
      bigEndian[i + 1] = littleEndian[i]!;
    }
    const out = new Int16Array(8);
    readPcm16be(bigEndian, out);
    expect(out).toEqual(samples);
    const bytes = new Uint8Array(16);
    writePcm16be(samples, bytes);
    expect(bytes).toEqual(bigEndian);
  });

  it('views aligned bytes without copying and copies unaligned ones', () => {
    expect(HOST_IS_LITTLE_ENDIAN).toBe(true); // x86 and arm64 hosts; the copy path covers others
    const buffer = new ArrayBuffer(18);
    const aligned = new Uint8Array(buffer, 2, 16);
    aligned.set(littleEndian);
    const view = pcm16leView(aligned);
    expect(view).toEqual(samples);
    expect(view.buffer).toBe(buffer);
    aligned[0] = 7;
    expect(view[0]).toBe(7);

    const unaligned = new Uint8Array(buffer, 1, 16);
    unaligned.set(littleEndian);
    const copy = pcm16leView(unaligned);
    expect(copy).toEqual(samples);
    expect(copy.buffer).not.toBe(buffer);

    const bytes = pcm16leBytes(samples);
    expect(bytes).toEqual(littleEndian);
    expect(bytes.buffer).toBe(samples.buffer);
  });

  it('handles empty input and rejects an odd byte count', () => {
    expect(pcm16leView(new Uint8Array(0))).toHaveLength(0);
    expect(readPcm16le(new Uint8Array(0), new Int16Array(0))).toBe(0);
    expect(() => pcm16leView(new Uint8Array(3))).toThrow(ParlaError);
    // With an odd count, the read functions read whole samples only.
    const out = new Int16Array(1);
    expect(readPcm16le(Uint8Array.from([1, 0, 9]), out)).toBe(1);
    expect(out[0]).toBe(1);
  });

  it('rejects output buffers that are too small', () => {
    expect(() => readPcm16le(littleEndian, new Int16Array(7))).toThrow(RangeError);
    expect(() => writePcm16le(samples, new Uint8Array(15))).toThrow(RangeError);
  });

  it('downmixes interleaved stereo by averaging', () => {
    const stereo = Int16Array.from([100, 300, -32768, -32768, 32767, 32767, 1, -2]);
    const mono = new Int16Array(4);
    expect(downmixToMono(stereo, 2, mono)).toBe(4);
    expect(Array.from(mono)).toEqual([200, -32768, 32767, 0]);
    const same = new Int16Array(8);
    downmixToMono(stereo, 1, same);
    expect(same).toEqual(stereo);
    expect(() => downmixToMono(stereo, 0, mono)).toThrow(RangeError);
  });
});
