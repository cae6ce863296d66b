/**
 * RtpSession with each codec over real UDP sockets on 127.0.0.1: tones through two sessions,
 * stateful codecs decoded in sequence order under reordering and loss, Opus with
 * telephone-event/48000, and RTCP sender reports on the codec's clock.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { G722Decoder, G722Encoder } from '../../../src/media/codecs/g722.js';
import { OpusCodec } from '../../../src/media/codecs/opus-codec.js';
import { G722FrameDecoder } from '../../../src/media/jitter/g722-frame-decoder.js';
import type { JitterFrameDecoder } from '../../../src/media/jitter/jitter-types.js';
import { OpusFrameDecoder } from '../../../src/media/jitter/opus-frame-decoder.js';
import { parseRtcpCompound } from '../../../src/transports/rtp/rtcp-packet.js';
import { RtpPacketView, parseRtpPacket } from '../../../src/transports/rtp/rtp-packet.js';
import { RtpPortAllocator } from '../../../src/transports/rtp/rtp-port-allocator.js';
import {
  RtpSession,
  type RtpCodecName,
  type RtpSessionOptions,
} from '../../../src/transports/rtp/rtp-session.js';
import type { DtmfDigitEvent } from '../../../src/transports/rtp/telephone-event.js';
import { ManualScheduler } from '../sip/support/manual-scheduler.js';
import { UdpPeer, openPeerPair } from './support/udp-peer.js';

const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) {
    await cleanup();
  }
});

const allocator = (() => {
  const minPort = 30_000 + 2 * Math.floor(Math.random() * 5000);
  return new RtpPortAllocator({ minPort, maxPort: minPort + 99 });
})();

async function open(
  clock: ManualScheduler,
  options: Partial<RtpSessionOptions> & Pick<RtpSessionOptions, 'codec' | 'payloadType'>,
): Promise<RtpSession> {
  const session = await RtpSession.open({
    allocator,
    bindAddress: '127.0.0.1',
    now: () => clock.nowMs,
    wallClockMs: () => 1_700_000_000_000 + clock.nowMs,
    scheduler: clock,
    random: () => 0.5,
    ...options,
  });
  cleanups.push(() => session.close());
  return session;
}

async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!condition()) {
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

function tone(frequencyHz: number, rateHz: number, amplitude: number, start: number, n: number) {
  return Int16Array.from({ length: n }, (_, i) =>
    Math.round(amplitude * Math.sin((2 * Math.PI * frequencyHz * (start + i)) / rateHz)),
  );
}

/** The share of the signal's power at `frequencyHz` (1 for a pure tone), and its RMS. */
function toneFigures(samples: Int16Array, frequencyHz: number, rateHz: number) {
  let re = 0;
  let im = 0;
  let power = 0;
  for (let i = 0; i < samples.length; i++) {
    const phase = (2 * Math.PI * frequencyHz * i) / rateHz;
    re += samples[i]! * Math.cos(phase);
    im += samples[i]! * Math.sin(phase);
    power += samples[i]! * samples[i]!;
  }
  const n = samples.length;
  const meanPower = power / n;
  return { share: (2 * (re * re + im * im)) / (n * n) / meanPower, rms: Math.sqrt(meanPower) };
}

const CODECS: { codec: RtpCodecName; payloadType: number; rateHz: number; toneHz: number }[] = [
  { codec: 'PCMU', payloadType: 0, rateHz: 8000, toneHz: 1000 },
  { codec: 'PCMA', payloadType: 8, rateHz: 8000, toneHz: 1000 },
  // 5 kHz is above what 8 kHz audio can carry: it arrives only if the path is wideband.
  { codec: 'G722', payloadType: 9, rateHz: 16_000, toneHz: 5000 },
  { codec: 'opus', payloadType: 111, rateHz: 16_000, toneHz: 5000 },
];

describe('RtpSession codecs over UDP', () => {
  it.each(CODECS)(
    '$codec: a $toneHz Hz tone at $rateHz Hz crosses two sessions at its frequency and level',
    async ({ codec, payloadType, rateHz, toneHz }) => {
      const clock = new ManualScheduler();
      const a = await open(clock, { codec, payloadType });
      const b = await open(clock, { codec, payloadType });
      a.setRemote({ address: '127.0.0.1', port: b.localPort });
      expect(a.sampleRateHz).toBe(rateHz);
      expect(a.frameSamples).toBe((rateHz * 20) / 1000);
      const n = a.frameSamples;
      const frames = 60;
      const out: Int16Array[] = [];
      for (let i = 0; i < frames; i++) {
        clock.advance(20);
        a.sendFrame(tone(toneHz, rateHz, 8000, i * n, n));
        await until(() => b.stats.audioPacketsReceived === i + 1, `packet ${i}`);
        const frame = b.pullFrame();
        expect(frame.samples).toHaveLength(n);
        expect(frame.sampleRateHz).toBe(rateHz);
        if (frame.kind === 'audio') {
          out.push(frame.samples.slice());
        }
      }
      expect(b.jitterBufferStats.invalid).toBe(0);
      expect(b.jitterBufferStats.lost).toBe(0);
      expect(out.length).toBeGreaterThanOrEqual(frames - 3);
      // Past the codec's start-up, 40 frames of steady tone.
      const steady = new Int16Array(40 * n);
      out.slice(10, 50).forEach((frame, i) => steady.set(frame, i * n));
      const { share, rms } = toneFigures(steady, toneHz, rateHz);
      expect(share).toBeGreaterThan(0.9);
      const inputRms = 8000 / Math.SQRT2;
      expect(rms / inputRms).toBeGreaterThan(0.7);
      expect(rms / inputRms).toBeLessThan(1.3);
    },
  );

  it.each([
    { codec: 'G722' as const, payloadType: 9, clockUnits: 160 },
    { codec: 'opus' as const, payloadType: 111, clockUnits: 960 },
  ])(
    '$codec: reordered and lost packets are decoded and concealed in sequence order',
    async ({ codec, payloadType, clockUnits }) => {
      const clock = new ManualScheduler();
      const session = await open(clock, { codec, payloadType });
      const peer = await UdpPeer.open();
      cleanups.push(() => peer.close());
      const payloads = encodeTone(codec, 40);
      const sendOrder: number[] = [];
      for (let i = 0; i < 40; i++) {
        sendOrder.push(i === 10 ? 11 : i === 11 ? 10 : i);
      }
      const reference = referenceDecoder(codec);
      const expected = new Map<number, Int16Array>();
      const pulled: { kind: string; sequenceNumber: number; samples: Int16Array }[] = [];
      let sent = 0;
      for (const index of sendOrder) {
        clock.advance(20);
        if (index !== 20) {
          const packet = rtp(
            1000 + index,
            5000 + index * clockUnits,
            payloadType,
            payloads[index]!,
          );
          await peer.send(packet, session.localPort);
          sent++;
          await until(() => session.stats.audioPacketsReceived === sent, `packet ${index}`);
        }
        const frame = session.pullFrame();
        pulled.push({ ...frame, samples: frame.samples.slice() });
      }
      // The decoder the session should have been: every frame in order, frame 20 concealed.
      for (let i = 0; i < 40; i++) {
        const samples = new Int16Array(320);
        if (i === 20) {
          if (!reference.conceal(samples)) {
            samples.fill(1); // no codec concealment: compared by kind only below
          }
        } else {
          expect(reference.decode(payloads[i]!, 0, payloads[i]!.length, samples)).toBe(true);
        }
        expect(samples.some((sample) => sample !== 0)).toBe(true);
        expected.set(i, samples);
      }
      const played = pulled.filter((frame) => frame.kind !== 'silence');
      // Frames are numbered on the timestamp grid (RtpReframer), consecutive from the first.
      const base = played[0]!.sequenceNumber;
      played.forEach((frame, position) => {
        if (frame.kind === 'audio') {
          expect(frame.sequenceNumber).toBe((base + position) & 0xffff);
        }
        if (position === 20) {
          expect(frame.kind).toBe('concealed');
          if (codec === 'opus') {
            expect(frame.samples).toEqual(expected.get(20));
          }
          return;
        }
        expect(frame.kind).toBe('audio');
        expect(frame.samples).toEqual(expected.get(position));
      });
      expect(played.length).toBeGreaterThanOrEqual(36);
      expect(session.jitterBufferStats.lost).toBe(1);
      expect(session.jitterBufferStats.late).toBe(0);
    },
  );

  it('opus: DTMF as telephone-event/48000, timestamps and RTCP on the 48 kHz clock', async () => {
    const clock = new ManualScheduler();
    const digits: DtmfDigitEvent[] = [];
    const a = await open(clock, {
      codec: 'opus',
      payloadType: 111,
      telephoneEventPayloadType: 102,
    });
    const b = await open(clock, {
      codec: 'opus',
      payloadType: 111,
      telephoneEventPayloadType: 102,
      onDtmf: (event) => digits.push(event),
    });
    a.setRemote({ address: '127.0.0.1', port: b.localPort });
    const silence = new Int16Array(320);
    a.sendFrame(silence);
    expect(a.sendDtmf('5', 100)).toBe(true);
    for (let i = 0; i < 15; i++) {
      a.sendFrame(silence);
    }
    await until(() => digits.length === 1, 'the digit');
    expect(digits[0]!.digit).toBe('5');
    // 100 ms of tone is 4800 units at 48 kHz; read on an 8 kHz clock it would be 600 ms.
    expect(digits[0]!.durationMs).toBeGreaterThanOrEqual(80);
    expect(digits[0]!.durationMs).toBeLessThanOrEqual(140);

    // Our own packets and sender report, seen by a plain socket pair.
    const peer = await openPeerPair();
    cleanups.push(
      () => peer.rtp.close(),
      () => peer.rtcp.close(),
    );
    const c = await open(clock, { codec: 'opus', payloadType: 111 });
    c.setRemote({ address: '127.0.0.1', port: peer.rtp.port });
    for (let i = 0; i < 10; i++) {
      c.sendFrame(tone(440, 16_000, 4000, i * 320, 320));
      // As the 20 ms clock would: the socket takes each packet before its buffer comes round.
      await new Promise((resolve) => setImmediate(resolve));
    }
    await peer.rtp.waitFor(10);
    const views = peer.rtp.received.map(({ data }) => {
      const view = new RtpPacketView();
      expect(parseRtpPacket(data, view)).toBeNull();
      return view;
    });
    const first = views[0]!.timestamp;
    views.forEach((view, i) => {
      expect(view.payloadType).toBe(111);
      expect(view.timestamp).toBe((first + i * 960) >>> 0);
    });
    await c.close();
    await peer.rtcp.waitFor(1);
    const compound = parseRtcpCompound(peer.rtcp.received.at(-1)!.data);
    expect(compound.ok).toBe(true);
    const sr = compound.ok ? compound.packets.find((packet) => packet.type === 'sr') : undefined;
    expect(sr).toMatchObject({ packetCount: 10, rtpTimestamp: (first + 10 * 960) >>> 0 });
  });

  it('G722: 30 ms packets are cut into 20 ms frames that decode as the whole stream does', async () => {
    const clock = new ManualScheduler();
    const session = await open(clock, { codec: 'G722', payloadType: 9 });
    // 600 ms of G.722 as one byte stream, sent as 20 packets of 30 ms (240 bytes).
    const stream = new Uint8Array(20 * 240);
    const pcm = tone(700, 16_000, 6000, 0, stream.length * 2);
    new G722Encoder().encode(pcm, 0, pcm.length, stream, 0);
    const reference = new Int16Array(pcm.length);
    new G722Decoder().decode(stream, 0, stream.length, reference, 0);
    const frames: Int16Array[] = [];
    let pulls = 0;
    for (let packet = 0; packet < 20; packet++) {
      clock.nowMs = packet * 30;
      const payload = stream.subarray(packet * 240, (packet + 1) * 240);
      session.receiveRtp(rtp(packet, packet * 240, 9, payload), '127.0.0.1', 9000);
      // Pull at 20 ms intervals up to now.
      for (; pulls * 20 + 40 <= clock.nowMs; pulls++) {
        const frame = session.pullFrame();
        if (frame.kind === 'audio') {
          frames.push(frame.samples.slice());
        }
      }
    }
    expect(frames.length).toBeGreaterThanOrEqual(25);
    frames.forEach((frame, index) => {
      expect(frame).toEqual(reference.subarray(index * 320, (index + 1) * 320));
    });
  });

  it('opus: packets of other durations and oversize packets are refused and counted', async () => {
    const clock = new ManualScheduler();
    const session = await open(clock, { codec: 'opus', payloadType: 111 });
    const encoder = new OpusCodec({ sampleRateHz: 16_000 });
    const good = encoder.encode(tone(440, 16_000, 4000, 0, 320));
    // TOC config 3 (SILK NB 60 ms), code 0: one 60 ms frame.
    const sixtyMs = Uint8Array.from([3 << 3, ...good.subarray(1)]);
    const oversize = new Uint8Array(1400).fill(good[0]!, 0, 1);
    session.receiveRtp(rtp(1, 0, 111, good), '127.0.0.1', 9000);
    session.receiveRtp(rtp(2, 960, 111, sixtyMs), '127.0.0.1', 9000);
    session.receiveRtp(rtp(3, 1920, 111, oversize), '127.0.0.1', 9000);
    expect(session.jitterBufferStats.invalid).toBe(2);
    expect(session.jitterBufferStats.received).toBe(1);
  });
});

function encodeTone(codec: 'G722' | 'opus', frames: number): Uint8Array[] {
  const payloads: Uint8Array[] = [];
  const g722 = new G722Encoder();
  const opus = new OpusCodec({ sampleRateHz: 16_000, bitrateBps: 32_000 });
  for (let i = 0; i < frames; i++) {
    const pcm = tone(700, 16_000, 6000, i * 320, 320);
    if (codec === 'G722') {
      const out = new Uint8Array(160);
      g722.encode(pcm, 0, 320, out, 0);
      payloads.push(out);
    } else {
      payloads.push(Uint8Array.from(opus.encode(pcm)));
    }
  }
  return payloads;
}

function referenceDecoder(codec: 'G722' | 'opus'): JitterFrameDecoder {
  return codec === 'G722' ? new G722FrameDecoder() : new OpusFrameDecoder(16_000);
}

function rtp(seq: number, timestamp: number, payloadType: number, payload: Uint8Array) {
  const packet = new Uint8Array(12 + payload.length);
  packet[0] = 0x80;
  packet[1] = payloadType;
  packet[2] = (seq >> 8) & 0xff;
  packet[3] = seq & 0xff;
  new DataView(packet.buffer).setUint32(4, timestamp >>> 0);
  new DataView(packet.buffer).setUint32(8, 0x4242);
  packet.set(payload, 12);
  return packet;
}
