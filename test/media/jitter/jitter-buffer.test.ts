import { describe, expect, it } from 'vitest';
import { encodeMuLaw } from '../../../src/media/codecs/g711.js';
import {
  JitterBuffer,
  type JitterBufferOptions,
  type JitterFrameKind,
} from '../../../src/media/jitter/jitter-buffer.js';

const FRAME = 160; // 20 ms at 8 kHz

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

/** A µ-law payload of a 400 Hz tone at `amplitude` (0 gives digital silence). */
function payload(amplitude: number): Uint8Array {
  const pcm = Int16Array.from({ length: FRAME }, (_, i) =>
    Math.round(amplitude * Math.sin((2 * Math.PI * 400 * i) / 8000)),
  );
  const codes = new Uint8Array(FRAME);
  encodeMuLaw(pcm, codes);
  return codes;
}

const LOUD = payload(8000);
const QUIET = payload(0);

interface Packet {
  index: number;
  arrivalMs: number;
}

interface Pulled {
  kind: JitterFrameKind;
  seq: number;
  ptsMs: number;
  peak: number;
}

/**
 * Sends `count` packets, one per 20 ms from time 0 with sequence numbers from `firstSeq` and
 * RTP timestamps from `firstTimestamp`, delivered at `arrival(index)` (null: lost), and pulls at
 * 20 ms ticks offset by `tickOffsetMs` until `ticks` pulls have been made.
 */
function simulate(options: {
  count: number;
  ticks: number;
  arrival: (index: number) => number | null;
  firstSeq?: number;
  firstTimestamp?: number;
  tickOffsetMs?: number;
  buffer?: Partial<JitterBufferOptions>;
  content?: (index: number) => Uint8Array;
  /** RTP timestamp of packet `index`; by default one frame per index. */
  timestamp?: (index: number) => number;
  duplicate?: boolean;
}) {
  const buffer = new JitterBuffer({ payloadFormat: 'pcmu', ...options.buffer });
  const firstSeq = options.firstSeq ?? 1000;
  const firstTimestamp = options.firstTimestamp ?? 123456;
  const packets: Packet[] = [];
  for (let index = 0; index < options.count; index++) {
    const arrivalMs = options.arrival(index);
    if (arrivalMs !== null) {
      packets.push({ index, arrivalMs });
      if (options.duplicate) {
        packets.push({ index, arrivalMs: arrivalMs + 1 });
      }
    }
  }
  packets.sort((a, b) => a.arrivalMs - b.arrivalMs);
  const pulled: Pulled[] = [];
  const results: Record<string, number> = {};
  const depths: number[] = [];
  let next = 0;
  for (let tick = 0; tick < options.ticks; tick++) {
    const nowMs = tick * 20 + (options.tickOffsetMs ?? 10);
    while (next < packets.length && packets[next]!.arrivalMs <= nowMs) {
      const { index, arrivalMs } = packets[next++]!;
      const result = buffer.push(
        (firstSeq + index) & 0xffff,
        (firstTimestamp + (options.timestamp?.(index) ?? index * FRAME)) >>> 0,
        options.content?.(index) ?? LOUD,
        arrivalMs,
      );
      results[result] = (results[result] ?? 0) + 1;
    }
    depths.push(buffer.stats.currentDepthMs);
    const frame = buffer.pull();
    let peak = 0;
    for (const s of frame.samples) {
      peak = Math.max(peak, Math.abs(s));
    }
    pulled.push({ kind: frame.kind, seq: frame.sequenceNumber, ptsMs: frame.ptsMs, peak });
  }
  const played = pulled.filter((p) => p.kind === 'audio').map((p) => p.seq);
  return { buffer, pulled, played, results, depths };
}

function range(from: number, count: number): number[] {
  return Array.from({ length: count }, (_, i) => (from + i) & 0xffff);
}

describe('JitterBuffer', () => {
  it('buffers to the minimum delay, then plays an in-order stream without gaps', () => {
    const { buffer, pulled, played, depths } = simulate({
      count: 100,
      ticks: 100,
      arrival: (i) => 20 * i + 5,
    });
    // Packet 0 arrives at 5 ms, packet 1 at 25 ms: playout starts at the 30 ms tick.
    expect(pulled[0]!.kind).toBe('silence');
    expect(pulled[1]).toMatchObject({ kind: 'audio', seq: 1000 });
    expect(played).toEqual(range(1000, 99));
    expect(pulled.map((p) => p.ptsMs)).toEqual(range(0, 100).map((i) => i * 20));
    expect(buffer.stats).toMatchObject({
      received: 100,
      duplicates: 0,
      late: 0,
      lost: 0,
      concealed: 0,
      targetDepthMs: 40,
      jitterMs: 0,
    });
    expect(new Set(depths.slice(1))).toEqual(new Set([40]));
  });

  it('reorders packets that arrive out of order within the delay', () => {
    // Each odd packet overtakes the even one before it by 8 ms.
    const { buffer, played } = simulate({
      count: 100,
      ticks: 101,
      arrival: (i) => 20 * i + (i % 2 === 0 ? 12 : 0),
    });
    expect(played).toEqual(range(1000, 100));
    expect(buffer.stats.lost).toBe(0);
    expect(buffer.stats.late).toBe(0);
    expect(buffer.stats.concealed).toBe(0);
  });

  it('starts from the earliest packet when the first two arrive swapped', () => {
    const { played } = simulate({
      count: 10,
      ticks: 12,
      arrival: (i) => (i === 0 ? 27 : i === 1 ? 21 : 20 * i + 1),
    });
    expect(played.slice(0, 3)).toEqual([1000, 1001, 1002]);
  });

  it('drops duplicates, before and after playout', () => {
    const { buffer, played, results } = simulate({
      count: 50,
      ticks: 51,
      arrival: (i) => 20 * i + 2,
      duplicate: true,
    });
    expect(played).toEqual(range(1000, 50));
    expect(results).toEqual({ accepted: 50, duplicate: 50 });
    expect(buffer.stats.duplicates).toBe(50);
    expect(buffer.stats.received).toBe(100);
    // A copy of a frame that has already played is a duplicate, not a late packet.
    expect(buffer.push(1010, 123456 + 10 * FRAME, LOUD, 2000)).toBe('duplicate');
  });

  it('conceals a packet that arrives after its turn and counts it late', () => {
    const { buffer, played, results, pulled } = simulate({
      count: 50,
      ticks: 51,
      arrival: (i) => 20 * i + 5 + (i === 20 ? 200 : 0),
    });
    expect(results.late).toBe(1);
    expect(played).toEqual(range(1000, 50).filter((s) => s !== 1020));
    expect(buffer.stats).toMatchObject({ late: 1, lost: 1, concealed: 1 });
    const concealed = pulled.findIndex((p) => p.kind === 'concealed');
    expect(pulled[concealed - 1]!.seq).toBe(1019);
    expect(pulled[concealed + 1]!.seq).toBe(1021);
  });

  it('plays straight through the 65535 → 0 wrap, with reordering across it', () => {
    const { buffer, played } = simulate({
      count: 40,
      ticks: 42,
      firstSeq: 65520,
      firstTimestamp: 0xffffffff - 10 * FRAME,
      arrival: (i) => 20 * i + (i === 16 ? 15 : i === 15 ? 21 : 3),
    });
    expect(played).toEqual(range(65520, 40));
    expect(played).toContain(65535);
    expect(played).toContain(0);
    expect(buffer.stats.lost).toBe(0);
    expect(buffer.stats.jitterMs).toBeLessThan(3);
  });

  it('conceals a burst of five lost packets: repeat-and-fade, then silence, no added delay', () => {
    const lostFrom = 20;
    const { buffer, pulled, played } = simulate({
      count: 60,
      ticks: 61,
      arrival: (i) => (i >= lostFrom && i < lostFrom + 5 ? null : 20 * i + 5),
    });
    expect(played).toEqual(range(1000, 60).filter((s) => s < 1020 || s > 1024));
    expect(buffer.stats).toMatchObject({ lost: 5, concealed: 5, late: 0 });
    const first = pulled.findIndex((p) => p.kind === 'concealed');
    const burst = pulled.slice(first, first + 5);
    expect(burst.every((p) => p.kind === 'concealed')).toBe(true);
    // Three frames of fading repeat, then silence.
    expect(burst[0]!.peak).toBeGreaterThan(burst[1]!.peak);
    expect(burst[1]!.peak).toBeGreaterThan(burst[2]!.peak);
    expect(burst[2]!.peak).toBeGreaterThan(0);
    expect(burst[3]!.peak).toBe(0);
    expect(burst[4]!.peak).toBe(0);
    // Audio resumes on the tick it would have played without the loss.
    expect(pulled[first + 5]).toMatchObject({ kind: 'audio', seq: 1025 });
    expect(pulled[first - 1]).toMatchObject({ kind: 'audio', seq: 1019 });
  });

  it('rides out a delay spike without losing packets, then drains the extra delay', () => {
    const { buffer, played, depths } = simulate({
      count: 400,
      ticks: 402,
      // Packets 50–54 are held up 100 ms and arrive in a burst with packet 55.
      arrival: (i) => (i >= 50 && i < 55 ? 20 * 55 + 5 : 20 * i + 5),
      content: () => QUIET,
    });
    expect(buffer.stats.lost).toBe(0);
    expect(buffer.stats.late).toBe(0);
    expect(buffer.stats.concealed).toBeGreaterThan(0);
    expect(played.slice(0, 55)).toEqual(range(1000, 55));
    expect(Math.max(...depths)).toBeGreaterThan(buffer.stats.targetDepthMs + 20);
    expect(buffer.stats.discarded).toBeGreaterThan(0);
    expect(depths.at(-10)).toBeLessThanOrEqual(buffer.stats.targetDepthMs + 20);
  });

  it('conceals, then rebuffers through a pause in the stream, and resumes without loss', () => {
    // After packet 49 the sender pauses for 1 s (as with silence suppression: the RTP timestamp
    // jumps, the sequence number does not).
    const pauseMs = 1000;
    const { buffer, pulled, played } = simulate({
      count: 100,
      ticks: 151,
      arrival: (i) => 20 * i + 5 + (i >= 50 ? pauseMs : 0),
      timestamp: (i) => (i * 20 + (i >= 50 ? pauseMs : 0)) * 8,
    });
    expect(played).toEqual(range(1000, 100));
    expect(buffer.stats).toMatchObject({ lost: 0, late: 0, targetDepthMs: 40 });
    const gap = pulled.slice(51, 101).map((p) => p.kind);
    // Concealment while the gap could still be loss (up to maxDelayMs), then silence.
    expect(gap.slice(0, buffer.capacityFrames)).toEqual(
      Array<string>(buffer.capacityFrames).fill('concealed'),
    );
    expect(new Set(gap.slice(buffer.capacityFrames))).toEqual(new Set(['silence']));
    expect(buffer.stats.concealed).toBe(buffer.capacityFrames);
    // Playout resumes once the target delay has been rebuilt.
    expect(pulled[101]).toMatchObject({ kind: 'audio', seq: 1050 });
  });

  it('adapts its delay to measured jitter between minDelayMs and maxDelayMs', () => {
    const steady = simulate({ count: 1500, ticks: 1500, arrival: (i) => 20 * i + 3 });
    expect(steady.buffer.stats.targetDepthMs).toBe(40);

    const next = random(7);
    const jittery = simulate({
      count: 3000,
      ticks: 3000,
      arrival: (i) => 20 * i + 5 + 60 * next() ** 2,
    });
    const stats = jittery.buffer.stats;
    expect(stats.jitterMs).toBeGreaterThan(5);
    expect(stats.targetDepthMs).toBeGreaterThan(40);
    expect(stats.targetDepthMs).toBeLessThanOrEqual(200);
    expect(stats.late + stats.lost).toBeLessThan(3000 * 0.02);
    expect(Math.max(...jittery.depths)).toBeLessThanOrEqual(jittery.buffer.maxDelayMs + 20);

    const wild = simulate({
      count: 500,
      ticks: 500,
      arrival: (i) => 20 * i + 400 * random(i)(),
      buffer: { maxDelayMs: 160 },
    });
    expect(wild.buffer.stats.targetDepthMs).toBe(160);
    expect(Math.max(...wild.depths)).toBeLessThanOrEqual(160 + 20);
  });

  it('drops the oldest audio when a burst overflows maxDelayMs', () => {
    const { buffer, results, depths } = simulate({
      count: 30,
      ticks: 1,
      tickOffsetMs: 10_000,
      arrival: (i) => i,
    });
    expect(results.accepted).toBe(30);
    expect(depths[0]).toBe(buffer.capacityFrames * 20);
    expect(buffer.stats.discarded + buffer.stats.lost).toBe(30 - buffer.capacityFrames);
  });

  it('restarts on a large sequence jump', () => {
    const buffer = new JitterBuffer({ payloadFormat: 'pcmu' });
    buffer.push(10, 0, LOUD, 0);
    buffer.push(11, 160, LOUD, 20);
    expect(buffer.pull().sequenceNumber).toBe(10);
    expect(buffer.push(5000, 999_999, LOUD, 40)).toBe('accepted');
    expect(buffer.pull().kind).toBe('silence'); // rebuffering from the new stream
    buffer.push(5001, 999_999 + 160, LOUD, 60);
    expect(buffer.pull()).toMatchObject({ kind: 'audio', sequenceNumber: 5000 });
  });

  it('decodes A-law and big-endian L16 payloads', () => {
    const l16 = new JitterBuffer({ payloadFormat: 'l16', sampleRateHz: 16000, minDelayMs: 20 });
    const bytes = new Uint8Array(640 + 12);
    bytes[12] = 0x12; // first sample 0x1234, behind a 12-byte RTP header
    bytes[13] = 0x34;
    bytes[14] = 0xff; // second sample −2
    bytes[15] = 0xfe;
    expect(l16.push(1, 0, bytes, 0, 12)).toBe('accepted');
    const frame = l16.pull();
    expect(frame.samples).toHaveLength(320);
    expect(Array.from(frame.samples.subarray(0, 3))).toEqual([0x1234, -2, 0]);

    const alaw = new JitterBuffer({ payloadFormat: 'pcma', minDelayMs: 20 });
    alaw.push(1, 0, new Uint8Array(160).fill(0xaa), 0);
    expect(alaw.pull().samples[0]).toBe(32256);
  });

  it('rejects payloads that are not one 20 ms frame and bad sequence numbers', () => {
    const buffer = new JitterBuffer({ payloadFormat: 'pcmu' });
    expect(buffer.push(1, 0, new Uint8Array(159), 0)).toBe('invalid');
    expect(buffer.push(1, 0, new Uint8Array(320), 0)).toBe('invalid');
    expect(buffer.stats.invalid).toBe(2);
    expect(buffer.stats.received).toBe(0);
    expect(() => buffer.push(65536, 0, LOUD, 0)).toThrow(RangeError);
    expect(() => new JitterBuffer({ payloadFormat: 'pcmu', minDelayMs: 10 })).toThrow(RangeError);
    expect(() => new JitterBuffer({ payloadFormat: 'pcmu', sampleRateHz: 11025 })).toThrow(
      RangeError,
    );
  });

  it('returns silence before any packet and reuses one frame object', () => {
    const buffer = new JitterBuffer({ payloadFormat: 'pcmu' });
    const first = buffer.pull();
    expect(first.kind).toBe('silence');
    expect(first.sequenceNumber).toBe(-1);
    expect(buffer.pull()).toBe(first);
    expect(first.ptsMs).toBe(20);
    expect(buffer.stats.concealed).toBe(0);
  });
});
