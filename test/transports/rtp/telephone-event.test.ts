import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RtpPacketView, parseRtpPacket } from '../../../src/transports/rtp/rtp-packet.js';
import {
  TelephoneEventReceiver,
  TelephoneEventSender,
  type DtmfDigitEvent,
} from '../../../src/transports/rtp/telephone-event.js';
import { SIPP_PCAP_DIR } from '../../support/sipp.js';
import { readPcapUdp } from './support/pcap-reader.js';

const SIPP_PCAPS = SIPP_PCAP_DIR;
const pcaps = (() => {
  try {
    return readdirSync(SIPP_PCAPS).filter((name) => name.startsWith('dtmf_2833_'));
  } catch {
    return [];
  }
})();

function decode(packets: Uint8Array[]): DtmfDigitEvent[] {
  const digits: DtmfDigitEvent[] = [];
  const receiver = new TelephoneEventReceiver(8000, (event) => digits.push(event));
  const view = new RtpPacketView();
  for (const packet of packets) {
    expect(parseRtpPacket(packet, view)).toBeNull();
    expect(receiver.receive(view.timestamp, packet, view.payloadOffset, view.payloadLength)).toBe(
      true,
    );
  }
  return digits;
}

describe('RFC 4733 telephone-events', () => {
  it.skipIf(pcaps.length === 0)('decodes each digit of the RFC 2833 pcaps SIPp ships, once', () => {
    expect(pcaps.length).toBe(12);
    for (const name of pcaps) {
      const expected = name.replace('dtmf_2833_', '').replace('.pcap', '');
      const digit = expected === 'pound' ? '#' : expected === 'star' ? '*' : expected;
      const packets = readPcapUdp(join(SIPP_PCAPS, name)).map((packet) => packet.payload);
      // The captures end with three copies of the end packet.
      expect(packets.length).toBe(10);
      const digits = decode(packets);
      expect(digits.map((event) => event.digit)).toEqual([digit]);
      expect(digits[0]!.durationMs).toBe(280); // 2240 samples at 8 kHz
    }
  });

  it('reports an event whose end packets were lost when the next event starts, or on flush', () => {
    const digits: string[] = [];
    const receiver = new TelephoneEventReceiver(8000, (event) => digits.push(event.digit));
    receiver.receive(1000, Uint8Array.from([5, 10, 0, 160]), 0, 4);
    receiver.receive(1000, Uint8Array.from([5, 10, 1, 64]), 0, 4);
    expect(digits).toEqual([]);
    receiver.receive(5000, Uint8Array.from([11, 10, 0, 160]), 0, 4);
    expect(digits).toEqual(['5']);
    receiver.flush();
    receiver.flush();
    expect(digits).toEqual(['5', '#']);
    expect(receiver.receive(9000, Uint8Array.from([1, 2]), 0, 2)).toBe(false);
  });

  it('does not report an event again when its late end packets arrive after the next began', () => {
    const digits: string[] = [];
    const receiver = new TelephoneEventReceiver(8000, (event) => digits.push(event.digit));
    receiver.receive(1000, Uint8Array.from([1, 0x8a, 3, 32]), 0, 4); // '1' ends
    receiver.receive(2000, Uint8Array.from([2, 10, 0, 160]), 0, 4); // '2' starts
    receiver.receive(1000, Uint8Array.from([1, 0x8a, 3, 32]), 0, 4); // a late copy of '1'
    receiver.receive(2000, Uint8Array.from([2, 0x8a, 3, 32]), 0, 4); // '2' ends
    expect(digits).toEqual(['1', '2']);
  });

  it('ignores non-DTMF events (flash, tones)', () => {
    const digits: string[] = [];
    const receiver = new TelephoneEventReceiver(8000, (event) => digits.push(event.digit));
    receiver.receive(100, Uint8Array.from([16, 0x8a, 0, 160]), 0, 4);
    expect(digits).toEqual([]);
  });

  it('encodes a digit as start, updates and three end packets that decode back', () => {
    const sender = new TelephoneEventSender(160, 8000);
    expect(sender.enqueue('x', 100)).toBe(false);
    expect(sender.enqueue('7', 100)).toBe(true);
    expect(sender.enqueue('#', 60)).toBe(true);
    const payloads: { kind: string; timestamp: number; bytes: number[] }[] = [];
    let timestamp = 48_000;
    const out = new Uint8Array(4);
    while (sender.active) {
      const kind = sender.next(timestamp, out, 0);
      payloads.push({ kind, timestamp: sender.startTimestamp, bytes: [...out] });
      timestamp += 160;
    }
    // '7' for 100 ms: 5 packets then 3 ends; '#' for 60 ms: 3 packets then 3 ends.
    expect(payloads.map((p) => p.kind)).toEqual([
      'start',
      'continue',
      'continue',
      'continue',
      'continue',
      'continue',
      'continue',
      'continue',
      'start',
      'continue',
      'continue',
      'continue',
      'continue',
      'continue',
    ]);
    expect(payloads[0]).toEqual({ kind: 'start', timestamp: 48_000, bytes: [7, 10, 0, 160] });
    expect(payloads[4]!.bytes).toEqual([7, 10, 3, 32]);
    for (const end of payloads.slice(5, 8)) {
      expect(end).toEqual({ kind: 'continue', timestamp: 48_000, bytes: [7, 0x8a, 3, 32] });
    }
    expect(payloads[8]!.timestamp).toBe(48_000 + 8 * 160);
    const digits: DtmfDigitEvent[] = [];
    const receiver = new TelephoneEventReceiver(8000, (event) => digits.push(event));
    for (const p of payloads) {
      receiver.receive(p.timestamp, Uint8Array.from(p.bytes), 0, 4);
    }
    expect(digits.map((d) => [d.digit, d.durationMs])).toEqual([
      ['7', 100],
      ['#', 60],
    ]);
  });
});
