import { describe, expect, it } from 'vitest';
import { G722Encoder } from '../../../src/media/codecs/g722.js';
import { OpusCodec } from '../../../src/media/codecs/opus-codec.js';
import { G722FrameDecoder } from '../../../src/media/jitter/g722-frame-decoder.js';
import { JitterBuffer } from '../../../src/media/jitter/jitter-buffer.js';
import {
  MAX_OPUS_PAYLOAD_BYTES,
  OpusFrameDecoder,
  opusPacketSamples48k,
} from '../../../src/media/jitter/opus-frame-decoder.js';

function tone(start: number): Int16Array {
  return Int16Array.from({ length: 320 }, (_, i) =>
    Math.round(6000 * Math.sin((2 * Math.PI * 900 * (start + i)) / 16_000)),
  );
}

function peak(samples: Int16Array): number {
  return samples.reduce((max, sample) => Math.max(max, Math.abs(sample)), 0);
}

function g722Frames(count: number): Uint8Array[] {
  const encoder = new G722Encoder();
  return Array.from({ length: count }, (_, index) => {
    const out = new Uint8Array(160);
    encoder.encode(tone(index * 320), 0, 320, out, 0);
    return out;
  });
}

function codedBuffer(decoder: G722FrameDecoder | OpusFrameDecoder): JitterBuffer {
  return new JitterBuffer({
    payloadFormat: 'coded',
    decoder,
    sampleRateHz: 16_000,
    clockRateHz: decoder instanceof OpusFrameDecoder ? 48_000 : 8000,
  });
}

describe('JitterBuffer with coded payloads', () => {
  it('reads Opus packet durations from the TOC byte (RFC 6716 §3.1)', () => {
    const at = (...bytes: number[]) =>
      opusPacketSamples48k(Uint8Array.from(bytes), 0, bytes.length);
    expect(at((1 << 3) | 0)).toBe(960); // SILK NB 20 ms, one frame
    expect(at((0 << 3) | 1)).toBe(960); // SILK NB 10 ms, two frames
    expect(at((2 << 3) | 0)).toBe(1920); // SILK NB 40 ms
    expect(at((13 << 3) | 0)).toBe(960); // hybrid 20 ms
    expect(at((31 << 3) | 0)).toBe(960); // CELT FB 20 ms
    expect(at((30 << 3) | 3, 2)).toBe(960); // CELT 10 ms, code 3 with two frames
    expect(at((29 << 3) | 3, 4)).toBe(960); // CELT 5 ms × 4
    expect(at((31 << 3) | 3)).toBe(-1); // code 3 without its count byte
    expect(opusPacketSamples48k(new Uint8Array(0), 0, 0)).toBe(-1);
  });

  it('needs a decoder, and bounds and checks the payloads it keeps', () => {
    expect(() => new JitterBuffer({ payloadFormat: 'coded' })).toThrow(/needs a decoder/);
    const buffer = codedBuffer(new OpusFrameDecoder(16_000));
    const packet = new OpusCodec({ sampleRateHz: 16_000 }).encode(tone(0));
    expect(buffer.push(0, 0, packet, 0)).toBe('accepted');
    const oversize = new Uint8Array(MAX_OPUS_PAYLOAD_BYTES + 1).fill(packet[0]!);
    expect(buffer.push(1, 960, oversize, 20)).toBe('invalid');
    expect(buffer.push(2, 1920, new Uint8Array(0), 40)).toBe('invalid');
    expect(buffer.stats.invalid).toBe(2);
  });

  it('conceals and counts a packet libopus refuses at playout', () => {
    const buffer = codedBuffer(new OpusFrameDecoder(16_000));
    const codec = new OpusCodec({ sampleRateHz: 16_000 });
    buffer.push(0, 0, codec.encode(tone(0)), 0);
    // CELT 10 ms × 2 (20 ms by its header), VBR, the first frame said to be 200 bytes long.
    expect(buffer.push(1, 960, Uint8Array.from([(30 << 3) | 3, 0x80 | 2, 200]), 20)).toBe(
      'accepted',
    );
    expect(buffer.pull().kind).toBe('audio');
    expect(buffer.pull()).toMatchObject({ kind: 'concealed', sequenceNumber: -1 });
    expect(buffer.stats).toMatchObject({ decodeErrors: 1, concealed: 1 });
  });

  it('decodes G.722 at playout in sequence order, whatever the arrival order', () => {
    const frames = g722Frames(8);
    const buffer = codedBuffer(new G722FrameDecoder());
    for (const index of [1, 0, 3, 2, 5, 4, 7, 6]) {
      expect(buffer.push(index, index * 160, frames[index]!, index * 20)).toBe('accepted');
    }
    const reference = new G722FrameDecoder();
    const expected = new Int16Array(320);
    for (let index = 0; index < 8; index++) {
      const frame = buffer.pull();
      expect([frame.kind, frame.sequenceNumber]).toEqual(['audio', index]);
      reference.decode(frames[index]!, 0, 160, expected);
      expect(frame.samples).toEqual(expected);
    }
  });

  it('conceals a lost G.722 frame by repeat-and-fade, a run of them fading to silence', () => {
    const frames = g722Frames(8);
    const buffer = codedBuffer(new G722FrameDecoder());
    buffer.push(0, 0, frames[0]!, 0);
    buffer.push(1, 160, frames[1]!, 20);
    expect(buffer.pull().kind).toBe('audio');
    const last = buffer.pull();
    expect(last.kind).toBe('audio');
    const lastSamples = last.samples.slice();
    // pull() reuses its frame object: read each one before the next pull.
    const concealed = [0, 1, 2, 3].map(() => {
      const frame = buffer.pull();
      return { kind: frame.kind, peak: peak(frame.samples) };
    });
    expect(concealed.map((f) => f.kind)).toEqual([
      'concealed',
      'concealed',
      'concealed',
      'concealed',
    ]);
    expect(concealed[0]!.peak).toBeGreaterThan(0);
    expect(concealed[0]!.peak).toBeLessThanOrEqual(peak(lastSamples));
    expect(concealed[3]!.peak).toBe(0);
  });

  it("conceals a lost Opus frame with libopus' PLC, then silence after fadeFrames", () => {
    const codec = new OpusCodec({ sampleRateHz: 16_000 });
    const packets = Array.from({ length: 12 }, (_, index) => codec.encode(tone(index * 320)));
    const buffer = codedBuffer(new OpusFrameDecoder(16_000));
    const reference = new OpusFrameDecoder(16_000);
    const expected = new Int16Array(320);
    for (let index = 0; index < 6; index++) {
      buffer.push(index, index * 960, packets[index]!, index * 20);
    }
    buffer.push(10, 10 * 960, packets[10]!, 200);
    for (let index = 0; index < 11; index++) {
      const frame = buffer.pull();
      if (index < 6) {
        expect(frame.kind).toBe('audio');
        reference.decode(packets[index]!, 0, packets[index]!.length, expected);
      } else if (index < 10) {
        expect(frame.kind).toBe('concealed');
        if (index < 9) {
          expect(reference.conceal(expected)).toBe(true); // fadeFrames (3) of PLC
        } else {
          expected.fill(0);
        }
      } else {
        expect(frame.kind).toBe('audio');
        reference.decode(packets[10]!, 0, packets[10]!.length, expected);
      }
      expect(frame.samples).toEqual(expected);
    }
    expect(buffer.stats.lost).toBe(4);
  });
});
