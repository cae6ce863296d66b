/**
 * The pieces of `npm run bench -- sip-load` that need no SIPp: the RFC 3550 jitter and arrival
 * gaps of a received stream, the caller pcap SIPp plays, SIPp's rate arguments and its
 * statistics file.
 */
import { describe, expect, it } from 'vitest';
import { buildCallerPcap, ipv4Checksum } from '../../bench/harness/caller-pcap.js';
import { RtpArrivalStats } from '../../bench/harness/rtp-arrival-stats.js';
import { duration, parseStatRows, sippRate } from '../../bench/harness/sipp-runner.js';
import { decodeMuLaw } from '../../src/media/codecs/g711.js';
import { parseRtpPacket, RtpPacketView } from '../../src/transports/rtp/rtp-packet.js';

describe('RtpArrivalStats', () => {
  it('reports no jitter and 20 ms gaps for a stream that arrives on time', () => {
    const stats = new RtpArrivalStats(8000);
    for (let i = 0; i < 100; i++) {
      stats.record(1000 + i * 20, 5000 + i * 160, 7);
    }
    expect(stats.summary()).toEqual({
      packets: 100,
      jitterMs: 0,
      maxJitterMs: 0,
      gapP50Ms: 20,
      gapP99Ms: 20,
      gapMaxMs: 20,
      gapsOverTwoPackets: 0,
    });
  });

  it('follows RFC 3550: J += (|D| − J) / 16, in timestamp units', () => {
    const stats = new RtpArrivalStats(8000);
    stats.record(0, 0, 1);
    stats.record(20, 160, 1);
    // 30 ms after the previous packet for 20 ms of audio: |D| = 80 units, J = 5.
    stats.record(50, 320, 1);
    expect(stats.summary().jitterMs).toBeCloseTo((5 / 8000) * 1000, 9);
    // 10 ms after it: |D| = 80 again, J = 5 + 75 / 16.
    stats.record(60, 480, 1);
    const j = 5 + 75 / 16;
    expect(stats.summary().jitterMs).toBeCloseTo((j / 8000) * 1000, 9);
    expect(stats.summary().maxJitterMs).toBeCloseTo((j / 8000) * 1000, 9);
    expect(stats.summary().gapMaxMs).toBe(30);
    expect(stats.summary().gapP50Ms).toBe(20);
  });

  it('counts long gaps, takes the timestamp modulo 2^32 and restarts on a new SSRC', () => {
    const stats = new RtpArrivalStats(8000);
    stats.record(0, 0xffff_ff60, 1);
    stats.record(20, 0, 1);
    expect(stats.summary().jitterMs).toBe(0);
    stats.record(90, 160, 1);
    expect(stats.summary().gapsOverTwoPackets).toBe(1);
    // A new SSRC a second later: no gap, no jitter from the change.
    const before = stats.summary();
    stats.record(1090, 999_999, 2);
    expect(stats.summary()).toEqual({ ...before, packets: 4 });
  });
});

describe('buildCallerPcap', () => {
  it('writes one PCMU RTP packet per 20 ms, speech at the phrases and silence between', async () => {
    const pcap = await buildCallerPcap(20_000);
    expect(pcap.durationMs).toBeGreaterThanOrEqual(20_000);
    const bytes = pcap.bytes;
    expect(bytes.readUInt32LE(0)).toBe(0xa1b2c3d4);
    expect(bytes.readUInt32LE(20)).toBe(1);
    const view = new RtpPacketView();
    const energyAt = new Map<number, number>();
    let at = 24;
    let index = 0;
    while (at < bytes.length) {
      const seconds = bytes.readUInt32LE(at);
      const micros = bytes.readUInt32LE(at + 4);
      expect(seconds * 1_000_000 + micros).toBe(index * 20_000);
      const length = bytes.readUInt32LE(at + 8);
      const ip = at + 16 + 14;
      expect(bytes.readUInt16BE(at + 16 + 12)).toBe(0x0800);
      expect(ipv4Checksum(bytes.subarray(ip, ip + 20))).toBe(0);
      const rtp = bytes.subarray(ip + 28, at + 16 + length);
      expect(parseRtpPacket(rtp, view)).toBeNull();
      expect([view.payloadType, view.sequenceNumber, view.timestamp]).toEqual([
        0,
        index,
        index * 160,
      ]);
      const samples = new Int16Array(160);
      decodeMuLaw(rtp, samples, view.payloadOffset, view.payloadLength);
      energyAt.set(
        index * 20,
        samples.reduce((sum, s) => sum + Math.abs(s), 0),
      );
      at += 16 + length;
      index++;
    }
    expect(index * 20).toBe(pcap.durationMs);
    const loudPackets = (from: number, to: number): number =>
      [...energyAt].filter(([ms, energy]) => ms >= from && ms < to && energy > 160 * 200).length;
    const first = pcap.phrases[0]!;
    expect(loudPackets(first.startMs, first.endMs)).toBeGreaterThan(20);
    expect(loudPackets(0, first.startMs)).toBe(0);
    expect(loudPackets(first.endMs + 100, pcap.phrases[1]!.startMs)).toBe(0);
  });
});

describe('SIPp arguments and statistics', () => {
  it('turns a rate in calls per second into whole calls per period', () => {
    expect(sippRate(2)).toEqual({ calls: 1, periodMs: 500 });
    expect(sippRate(50 / 30)).toEqual({ calls: 1, periodMs: 600 });
    expect(sippRate(10 / 30)).toEqual({ calls: 1, periodMs: 3000 });
    const odd = sippRate(0.7);
    expect(odd.calls / odd.periodMs).toBeCloseTo(0.0007, 6);
    expect(() => sippRate(0)).toThrow(RangeError);
  });

  it('reads the statistics file by column and its durations', () => {
    const text =
      'StartTime;CurrentTime;TotalCallCreated;CurrentCall;SuccessfulCall(C);CallLength(C);\n' +
      '2026-11-22\t12:44:30.15\t1795351470.15;2026-11-22\t12:44:31.15\t1795351471.15;1;1;0;00:00:00:000000;\n' +
      '2026-11-22\t12:44:30.15\t1795351470.15;2026-11-22\t12:44:42.19\t1795351482.19;2;0;2;00:00:08:046000;\n';
    const rows = parseStatRows(text);
    expect(rows).toHaveLength(2);
    expect(rows[1]!.CurrentCall).toBe('0');
    expect(rows[1]!['SuccessfulCall(C)']).toBe('2');
    expect(duration(rows[1]!['CallLength(C)'])).toBe(8046);
    expect(duration('01:02:03:500000')).toBe(3_723_500);
    expect(duration('not a time')).toBeNull();
    expect(parseStatRows('')).toEqual([]);
  });
});
