import { describe, expect, it } from 'vitest';
import { RtpReframer } from '../../../src/transports/rtp/rtp-reframer.js';

/** Records what the reframer pushes, in place of a jitter buffer. */
class RecordingJitter {
  readonly frameSamples = 160;
  readonly frames: { seq: number; timestamp: number; bytes: number[] }[] = [];

  push(seq: number, timestamp: number, packet: Uint8Array, _nowMs: number, offset = 0, length = 0) {
    this.frames.push({ seq, timestamp, bytes: [...packet.subarray(offset, offset + length)] });
    return 'accepted' as const;
  }
}

const ramp = (samples: number): Uint8Array =>
  Uint8Array.from({ length: samples }, (_, i) => i % 251);

describe('RtpReframer', () => {
  it('cuts 30 ms packets into 20 ms frames in order, sample for sample', () => {
    const jitter = new RecordingJitter();
    const reframer = new RtpReframer(jitter);
    const audio = ramp(240 * 8);
    let pushed = 0;
    for (let i = 0; i < 8; i++) {
      pushed += reframer.push(1000 + i * 240, audio, i * 240, 240, i * 30);
    }
    expect(pushed).toBe(12); // 1,920 samples = 12 frames of 160
    jitter.frames.forEach((frame, f) => {
      expect(frame.seq).toBe(f);
      expect(frame.timestamp).toBe(f * 160);
      expect(frame.bytes).toEqual([...audio.subarray(f * 160, f * 160 + 160)]);
    });
  });

  it('completes straddled frames from packets out of order, once each', () => {
    const jitter = new RecordingJitter();
    const reframer = new RtpReframer(jitter);
    const audio = ramp(720);
    expect(reframer.push(0, audio, 0, 240, 0)).toBe(1); // frame 0 and half of frame 1
    expect(reframer.push(480, audio, 480, 240, 30)).toBe(1); // frame 3, half of frame 2…
    expect(reframer.push(240, audio, 240, 240, 40)).toBe(2); // …frames 1 and 2 complete
    expect(reframer.push(240, audio, 240, 240, 41)).toBe(0); // a duplicate
    expect(jitter.frames.map((frame) => frame.seq)).toEqual([0, 3, 1, 2]);
    expect(jitter.frames[3]!.bytes).toEqual([...audio.subarray(320, 480)]);
  });

  it('passes 20 ms packets through across a timestamp wrap and renumbers after a reset', () => {
    const jitter = new RecordingJitter();
    const reframer = new RtpReframer(jitter);
    const audio = ramp(160);
    for (let i = 0; i < 3; i++) {
      expect(reframer.push((0xffffff00 + i * 160) >>> 0, audio, 0, 160, i * 20)).toBe(1);
    }
    reframer.reset(); // a new SSRC with an unrelated timestamp
    expect(reframer.push(77, audio, 0, 160, 60)).toBe(1);
    expect(reframer.push(9_000_000, audio, 0, 160, 80)).toBe(1); // a jump: a new grid
    expect(jitter.frames.map((frame) => frame.seq)).toEqual([0, 1, 2, 3, 4]);
  });
});
