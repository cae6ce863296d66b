import { describe, expect, it } from 'vitest';
import { decodeMuLaw, encodeMuLaw } from '../../../src/media/codecs/g711.js';
import {
  InboundAudioDecoder,
  OutboundAudioEncoder,
} from '../../../src/transports/websocket/audio-codec.js';

function pcmBytes(samples: number[]): Uint8Array {
  const bytes = new Uint8Array(samples.length * 2);
  const view = new DataView(bytes.buffer);
  samples.forEach((sample, i) => view.setInt16(i * 2, sample, true));
  return bytes;
}

/** A standalone ArrayBuffer holding `bytes` (as uWS hands messages over). */
const message = (bytes: Uint8Array): ArrayBuffer => bytes.slice().buffer;

describe('InboundAudioDecoder', () => {
  it('decodes PCM16LE split at any byte, keeping an odd byte for the next frame', () => {
    const samples = [0, 1, -1, 32767, -32768, 1234, -4321, 258];
    const bytes = pcmBytes(samples);
    for (const cuts of [[1], [3, 4], [1, 1, 1], [5], [15], [2, 7, 9]]) {
      const decoder = new InboundAudioDecoder('pcm_s16le');
      const out: number[] = [];
      let offset = 0;
      for (const cut of [...cuts, bytes.length]) {
        const end = Math.min(bytes.length, offset + cut);
        out.push(...decoder.decode(message(bytes.subarray(offset, end))));
        offset = end;
        if (offset >= bytes.length) {
          break;
        }
      }
      expect(out).toEqual(samples);
      expect(decoder.hasCarryByte).toBe(false);
    }
  });

  it('returns arrays that own their buffers (transferable) and an empty one for 1 byte', () => {
    const decoder = new InboundAudioDecoder('pcm_s16le');
    expect(decoder.decode(message(new Uint8Array([7])))).toHaveLength(0);
    expect(decoder.hasCarryByte).toBe(true);
    const samples = decoder.decode(message(new Uint8Array([1, 2, 3])));
    expect([...samples]).toEqual([(1 << 8) | 7, (3 << 8) | 2]);
    expect(samples.byteOffset).toBe(0);
    expect(samples.buffer.byteLength).toBe(samples.byteLength);
  });

  it('keeps the PCM byte alignment across a dropped message', () => {
    const decoder = new InboundAudioDecoder('pcm_s16le');
    const bytes = pcmBytes([100, 200, 300, 400]);
    expect([...decoder.decode(message(bytes.subarray(0, 3)))]).toEqual([100]);
    decoder.skip(message(bytes.subarray(3, 6)));
    expect([...decoder.decode(message(bytes.subarray(6)))]).toEqual([400]);
  });

  it('decodes mu-law one sample per byte', () => {
    const codes = new Uint8Array([0, 0x7f, 0x80, 0xff, 0x12, 0x9a]);
    const expected = new Int16Array(codes.length);
    decodeMuLaw(codes, expected);
    const decoder = new InboundAudioDecoder('mulaw');
    expect(decoder.decode(message(codes))).toEqual(expected);
    expect(decoder.decode(new ArrayBuffer(0))).toHaveLength(0);
  });
});

describe('OutboundAudioEncoder', () => {
  it('passes PCM16 through and encodes mu-law into one reused buffer', () => {
    const frame = new Int16Array([100, -100, 3000, -3000]);
    expect(new OutboundAudioEncoder('pcm_s16le', 4).encode(frame)).toBe(frame);
    const encoder = new OutboundAudioEncoder('mulaw', 4);
    const first = encoder.encode(frame);
    const expected = new Uint8Array(4);
    encodeMuLaw(frame, expected);
    expect(first).toEqual(expected);
    expect(encoder.encode(frame)).toBe(first);
    expect(encoder.encode(frame.subarray(0, 2))).toEqual(expected.subarray(0, 2));
  });
});
