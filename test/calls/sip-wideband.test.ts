/**
 * Inbound SIP calls that offer wideband codecs (SIPp as the trunk, the echo handler): an
 * Opus-only offer is answered with Opus, an offer of G.722 before PCMU with G.722, and the
 * caller's 16 kHz audio goes to the worker and comes back over RTP in that codec.
 *
 * Needs the call layer wired to src/calls/sip-codecs.ts (the inbound call's codec list and
 * pipeline rate); see the wideband report for the edits.
 */
import { tmpdir } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { G722Encoder } from '../../src/media/codecs/g722.js';
import { OpusCodec } from '../../src/media/codecs/opus-codec.js';
import { G722FrameDecoder } from '../../src/media/jitter/g722-frame-decoder.js';
import type { JitterFrameDecoder } from '../../src/media/jitter/jitter-types.js';
import { OpusFrameDecoder } from '../../src/media/jitter/opus-frame-decoder.js';
import { hasSipp, runSipp } from '../support/sipp.js';
import { waitFor } from './websocket-call-harness.js';
import { rtpPeer, sippArgs, useSipHarness } from './sip-call-harness.js';

const h = useSipHarness({ rtpInactivityTimeoutMs: 3000 });
const sockets: { close(): void }[] = [];
afterEach(() => sockets.splice(0).forEach((socket) => socket.close()));

let nextNumber = 5000;
const newNumber = (): string => `+1555010${nextNumber++}`;

interface Case {
  readonly name: string;
  readonly offer: readonly string[];
  readonly payloadType: number;
  readonly clockUnitsPerFrame: number;
  readonly encoder: () => (pcm: Int16Array) => Uint8Array;
  readonly decoder: () => JitterFrameDecoder;
}

const CASES: readonly Case[] = [
  {
    name: 'an Opus-only offer is answered with Opus',
    offer: ['formats', '111 101', 'pt', '111', 'rtpmap', 'opus/48000/2'],
    payloadType: 111,
    clockUnitsPerFrame: 960,
    encoder: () => {
      const codec = new OpusCodec({ sampleRateHz: 16_000, bitrateBps: 32_000 });
      return (pcm) => Uint8Array.from(codec.encode(pcm));
    },
    decoder: () => new OpusFrameDecoder(16_000),
  },
  {
    name: 'an offer of G.722 before PCMU is answered with G.722',
    offer: ['formats', '9 0 101', 'pt', '9', 'rtpmap', 'G722/8000'],
    payloadType: 9,
    clockUnitsPerFrame: 160,
    encoder: () => {
      const codec = new G722Encoder();
      return (pcm) => {
        const out = new Uint8Array(160);
        codec.encode(pcm, 0, 320, out, 0);
        return out;
      };
    },
    decoder: () => new G722FrameDecoder(),
  },
];

describe.skipIf(!hasSipp)('inbound SIP calls with wideband codecs (SIPp trunk, echo)', () => {
  it.each(CASES)('$name, with 16 kHz audio both ways', { timeout: 40_000 }, async (c) => {
    const number = newNumber();
    const { phoneNumberId } = await h.phoneNumber({ number });
    const peer = await rtpPeer();
    sockets.push(peer.socket);
    const event = c.payloadType === 111 ? 'telephone-event/48000' : 'telephone-event/8000';
    const offer = [...c.offer, 'event', event].flatMap((value, index) =>
      index % 2 === 0 ? ['-set', value] : [value],
    );
    const sipp = runSipp(
      sippArgs(h, 'inbound-wideband.xml', [
        '-s',
        number,
        '-set',
        'rtpport',
        String(peer.port),
        ...offer,
      ]),
      tmpdir(),
    );
    await waitFor(() => h.sip.calls.liveCalls > 0, 10_000, 'the call to be answered');
    let parlaPort = 0;
    peer.socket.once('message', (_data, info) => (parlaPort = info.port));
    await waitFor(() => parlaPort !== 0, 5000, 'RTP from Parla');
    // A 1 kHz tone at 16 kHz, paced at 20 ms, until SIPp hangs up.
    const encode = c.encoder();
    let done = false;
    void sipp.then(() => (done = true));
    for (let frame = 0; !done; frame++) {
      const pcm = Int16Array.from({ length: 320 }, (_, i) =>
        Math.round(8000 * Math.sin((2 * Math.PI * 1000 * (frame * 320 + i)) / 16_000)),
      );
      peer.socket.send(
        rtp(frame, frame * c.clockUnitsPerFrame, c.payloadType, encode(pcm)),
        parlaPort,
        '127.0.0.1',
      );
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const result = await sipp;
    expect(result.code, result.output).toBe(0);

    // Everything Parla sent is in the offered codec, and the echo decodes to sound.
    const audio = peer.packets.filter((packet) => (packet[1]! & 0x7f) !== 101);
    expect(audio.length).toBeGreaterThan(100);
    expect(new Set(audio.map((packet) => packet[1]! & 0x7f))).toEqual(new Set([c.payloadType]));
    const decoder = c.decoder();
    const samples = new Int16Array(320);
    let loud = 0;
    for (const packet of audio) {
      expect(decoder.decode(packet, 12, packet.length - 12, samples)).toBe(true);
      if (meanAbs(samples) > 1000) {
        loud++;
      }
    }
    expect(loud).toBeGreaterThan(25);

    const call = (await h.callsOf(phoneNumberId))[0]!;
    await waitFor(() => h.observers.get(String(call.id))?.ended !== undefined, 15_000, 'the end');
    // Some 4 s of caller audio reached the worker at 16 kHz (8 kHz would be half as many samples).
    expect(h.observers.get(String(call.id))!.audio.user).toBeGreaterThan(48_000);
  });
});

function meanAbs(samples: Int16Array): number {
  let sum = 0;
  for (const sample of samples) {
    sum += Math.abs(sample);
  }
  return sum / samples.length;
}

function rtp(sequence: number, timestamp: number, payloadType: number, payload: Uint8Array) {
  const packet = Buffer.alloc(12 + payload.length);
  packet[0] = 0x80;
  packet[1] = payloadType;
  packet.writeUInt16BE(sequence & 0xffff, 2);
  packet.writeUInt32BE(timestamp >>> 0, 4);
  packet.writeUInt32BE(0x5151, 8);
  packet.set(payload, 12);
  return packet;
}
