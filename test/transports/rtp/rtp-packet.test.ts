import { describe, expect, it } from 'vitest';
import {
  RtpPacketView,
  parseRtpPacket,
  timestampAdd,
  writeRtpPacket,
} from '../../../src/transports/rtp/rtp-packet.js';

function header(bytes: number[]): Uint8Array {
  return Uint8Array.from(bytes);
}

describe('RTP packets', () => {
  it('writes and parses a packet round trip', () => {
    const out = new Uint8Array(200);
    const payload = Uint8Array.from({ length: 160 }, (_, i) => i);
    const length = writeRtpPacket(
      out,
      {
        marker: true,
        payloadType: 8,
        sequenceNumber: 0xfffe,
        timestamp: 0xfffffff0,
        ssrc: 0xdeadbeef,
      },
      payload,
    );
    expect(length).toBe(172);
    expect([...out.subarray(0, 12)]).toEqual([
      0x80, 0x88, 0xff, 0xfe, 0xff, 0xff, 0xff, 0xf0, 0xde, 0xad, 0xbe, 0xef,
    ]);
    const view = new RtpPacketView();
    expect(parseRtpPacket(out, view, length)).toBeNull();
    expect(view).toMatchObject({
      marker: true,
      payloadType: 8,
      sequenceNumber: 0xfffe,
      timestamp: 0xfffffff0,
      ssrc: 0xdeadbeef,
      payloadOffset: 12,
      payloadLength: 160,
      csrcCount: 0,
    });
    expect(out[view.payloadOffset + 5]).toBe(5);
  });

  it('reads CSRCs, a header extension and padding', () => {
    const packet = header([
      0xb2,
      0x00,
      0,
      1,
      0,
      0,
      0,
      2,
      0,
      0,
      0,
      3, // V=2 P X CC=2
      0,
      0,
      0,
      10,
      0,
      0,
      0,
      11, // CSRCs
      0xbe,
      0xde,
      0,
      1,
      1,
      2,
      3,
      4, // extension: profile, 1 word
      9,
      9,
      9, // payload
      0,
      0,
      3, // padding of 3
    ]);
    const view = new RtpPacketView();
    expect(parseRtpPacket(packet, view)).toBeNull();
    expect(view.csrcCount).toBe(2);
    expect([...view.csrcs.subarray(0, 2)]).toEqual([10, 11]);
    expect(view.extensionProfile).toBe(0xbede);
    expect(view.extensionLength).toBe(4);
    expect(view.payloadOffset).toBe(28);
    expect(view.payloadLength).toBe(3);
    expect(view.paddingLength).toBe(3);
  });

  it('rejects malformed packets with stable codes', () => {
    const view = new RtpPacketView();
    const base = [0x80, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3];
    expect(parseRtpPacket(header(base.slice(0, 11)), view)).toBe('RTP_TOO_SHORT');
    expect(parseRtpPacket(header([0x40, ...base.slice(1)]), view)).toBe('RTP_BAD_VERSION');
    expect(parseRtpPacket(header([0x83, ...base.slice(1), 0, 0, 0, 1]), view)).toBe('RTP_BAD_CSRC');
    expect(parseRtpPacket(header([0x90, ...base.slice(1), 0, 0]), view)).toBe('RTP_BAD_EXTENSION');
    expect(parseRtpPacket(header([0x90, ...base.slice(1), 0, 0, 0, 2, 1, 2, 3, 4]), view)).toBe(
      'RTP_BAD_EXTENSION',
    );
    expect(parseRtpPacket(header([0xa0, ...base.slice(1), 1, 0]), view)).toBe('RTP_BAD_PADDING');
    expect(parseRtpPacket(header([0xa0, ...base.slice(1), 1, 9]), view)).toBe('RTP_BAD_PADDING');
    expect(parseRtpPacket(header([0x80, 200, ...base.slice(2)]), view)).toBe('RTP_IS_RTCP');
    expect(parseRtpPacket(new Uint8Array(70_000), view)).toBe('RTP_TOO_LARGE');
    expect(parseRtpPacket(header(base), view, 20)).toBe('RTP_TOO_LARGE');
  });

  it('refuses out-of-range header fields when writing', () => {
    const out = new Uint8Array(64);
    const fields = { marker: false, payloadType: 0, sequenceNumber: 0, timestamp: 0, ssrc: 0 };
    expect(() => writeRtpPacket(out, { ...fields, payloadType: 128 }, new Uint8Array(1))).toThrow(
      RangeError,
    );
    expect(() =>
      writeRtpPacket(out, { ...fields, sequenceNumber: 65536 }, new Uint8Array(1)),
    ).toThrow(RangeError);
    expect(() => writeRtpPacket(out, { ...fields, ssrc: -1 }, new Uint8Array(1))).toThrow(
      RangeError,
    );
    expect(() => writeRtpPacket(out, fields, new Uint8Array(60))).toThrow(RangeError);
  });

  it('wraps timestamps at 32 bits', () => {
    expect(timestampAdd(0xffffff60, 160)).toBe(0);
    expect(timestampAdd(0xffffff60, 320)).toBe(160);
  });

  it('parses a long stream of packets into one reused view', () => {
    const out = new Uint8Array(172);
    const payload = new Uint8Array(160);
    const view = new RtpPacketView();
    const fields = { marker: false, payloadType: 0, sequenceNumber: 0, timestamp: 0, ssrc: 7 };
    const run = (count: number): void => {
      for (let i = 0; i < count; i++) {
        fields.sequenceNumber = i & 0xffff;
        fields.timestamp = (i * 160) >>> 0;
        writeRtpPacket(out, fields, payload);
        parseRtpPacket(out, view);
      }
    };
    // Allocation per packet is measured in bench/, not asserted here (heap readings flake).
    run(200_000);
    expect(view.sequenceNumber).toBe((200_000 - 1) & 0xffff);
  });
});
