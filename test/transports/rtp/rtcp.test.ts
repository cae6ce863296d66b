import { describe, expect, it } from 'vitest';
import {
  parseRtcpCompound,
  rtcpIntervalMs,
  serializeRtcpCompound,
  type RtcpPacket,
} from '../../../src/transports/rtp/rtcp-packet.js';
import { RtpReceiverStats } from '../../../src/transports/rtp/rtp-receiver-stats.js';

const block = {
  ssrc: 0x11223344,
  fractionLost: 25,
  cumulativeLost: -3,
  extendedHighestSequence: 0x1_0005,
  jitter: 40,
  lastSenderReport: 0xabcd1234,
  delaySinceLastSenderReport: 65_536,
};

describe('RTCP packets', () => {
  it('serializes and parses SR, RR, SDES and BYE', () => {
    const packets: RtcpPacket[] = [
      {
        type: 'sr',
        ssrc: 1,
        ntpSeconds: 3_900_000_000,
        ntpFraction: 0x80000000,
        rtpTimestamp: 160_000,
        packetCount: 50,
        octetCount: 8000,
        reports: [block],
      },
      { type: 'sdes', chunks: [{ ssrc: 1, cname: 'parla@host' }] },
      { type: 'bye', ssrcs: [1], reason: 'call ended' },
    ];
    const bytes = serializeRtcpCompound(packets);
    expect(bytes.length % 4).toBe(0);
    expect(bytes[0]).toBe(0x81);
    expect(bytes[1]).toBe(200);
    expect(parseRtcpCompound(bytes)).toEqual({ ok: true, packets });
    const rr = serializeRtcpCompound([{ type: 'rr', ssrc: 9, reports: [] }]);
    expect([...rr]).toEqual([0x80, 201, 0, 1, 0, 0, 0, 9]);
    expect(parseRtcpCompound(rr)).toEqual({
      ok: true,
      packets: [{ type: 'rr', ssrc: 9, reports: [] }],
    });
  });

  it('rejects compounds that break the RFC 3550 A.2 rules', () => {
    const good = serializeRtcpCompound([
      { type: 'rr', ssrc: 9, reports: [block] },
      { type: 'sdes', chunks: [{ ssrc: 9, cname: 'x' }] },
    ]);
    expect(parseRtcpCompound(good.subarray(0, 4))).toEqual({ ok: false, code: 'RTCP_TOO_SHORT' });
    expect(parseRtcpCompound(good.subarray(0, good.length - 2))).toMatchObject({ ok: false });
    const badVersion = Buffer.from(good);
    badVersion[0] = 0x41;
    expect(parseRtcpCompound(badVersion)).toEqual({ ok: false, code: 'RTCP_BAD_VERSION' });
    const sdesFirst = serializeRtcpCompound([{ type: 'sdes', chunks: [{ ssrc: 9, cname: 'x' }] }]);
    expect(parseRtcpCompound(sdesFirst)).toEqual({ ok: false, code: 'RTCP_BAD_FIRST_PACKET' });
    const longLength = Buffer.from(good);
    longLength.writeUInt16BE(100, 2);
    expect(parseRtcpCompound(longLength)).toEqual({ ok: false, code: 'RTCP_BAD_LENGTH' });
    const paddedFirst = Buffer.from(good);
    paddedFirst[0] = paddedFirst[0]! | 0x20;
    expect(parseRtcpCompound(paddedFirst)).toEqual({ ok: false, code: 'RTCP_BAD_PADDING' });
  });

  it('randomises the interval over [0.5, 1.5] of the 5 s minimum (2.5 s at first)', () => {
    const base = {
      members: 2,
      senders: 2,
      weSent: true,
      averageRtcpSizeBytes: 100,
      sessionBandwidthBytesPerS: 10_000,
    };
    expect(rtcpIntervalMs({ ...base, initial: false, random: () => 0 })).toBe(2500);
    expect(rtcpIntervalMs({ ...base, initial: false, random: () => 0.5 })).toBe(5000);
    expect(rtcpIntervalMs({ ...base, initial: false, random: () => 0.999 })).toBeCloseTo(7495);
    expect(rtcpIntervalMs({ ...base, initial: true, random: () => 0.5 })).toBe(2500);
    // Many members on a small bandwidth: the bandwidth share, not the minimum, decides.
    expect(
      rtcpIntervalMs({ ...base, members: 100, weSent: false, initial: false, random: () => 0.5 }),
    ).toBeGreaterThan(5000);
  });
});

describe('RTP receiver statistics (RFC 3550 A.1, A.3, A.8)', () => {
  it('counts loss across a sequence wrap and the fraction since the last report', () => {
    const stats = new RtpReceiverStats(8000);
    let seq = 65_530;
    for (let i = 0; i < 20; i++) {
      if (i !== 7 && i !== 8) {
        stats.update(seq, i * 160, i * 20, true);
      }
      seq = (seq + 1) & 0xffff;
    }
    expect(stats.expected).toBe(20);
    expect(stats.lost).toBe(2);
    const report = stats.takeReport();
    expect(report).toEqual({
      fractionLost: Math.floor((2 * 256) / 20),
      cumulativeLost: 2,
      extendedHighestSequence: 65_536 + 13,
      jitter: 0,
    });
    stats.update(seq, 20 * 160, 400, true);
    expect(stats.takeReport().fractionLost).toBe(0);
  });

  it('estimates interarrival jitter in timestamp units', () => {
    const stats = new RtpReceiverStats(8000);
    // Every other packet arrives 10 ms late: |D| alternates 80 timestamp units.
    for (let i = 0; i < 400; i++) {
      stats.update(i, i * 160, i * 20 + (i % 2) * 10, true);
    }
    expect(stats.jitter).toBeGreaterThan(75);
    expect(stats.jitter).toBeLessThanOrEqual(80);
    expect(stats.jitterMs).toBeCloseTo(stats.jitter / 8);
  });

  it('believes a sequence restart only on the second packet of the new run', () => {
    const stats = new RtpReceiverStats(8000);
    stats.update(100, 0, 0, true);
    stats.update(101, 160, 20, true);
    expect(stats.update(40_000, 0, 40, true)).toBe(false);
    expect(stats.update(40_001, 160, 60, true)).toBe(true);
    expect(stats.received).toBe(1);
    expect(stats.expected).toBe(1);
    stats.reset(); // a new SSRC
    stats.update(7, 0, 100, true);
    expect([stats.received, stats.expected, stats.lost]).toEqual([1, 1, 0]);
  });
});
