import type { RtpReceiverStats } from './rtp-receiver-stats.js';
import type { RtcpPacket, RtcpReportBlock } from './rtcp-packet.js';

/** Seconds from 1900 (NTP era 0) to 1970. */
const NTP_UNIX_OFFSET_S = 2_208_988_800;

/** What the reporter reads from the session when it builds a report. */
export interface RtcpSenderState {
  readonly ssrc: number;
  readonly packetsSent: number;
  /** Payload octets sent (RFC 3550 §6.4.1 sender's octet count). */
  readonly payloadBytesSent: number;
  /** The RTP timestamp of the next frame to send, matching `nowMs`. */
  readonly currentTimestamp: number;
}

/**
 * Builds this session's RTCP compound packets (§6.4: SR when we sent since the last report,
 * else RR; then SDES CNAME; BYE on close) from the session's counters, and keeps what incoming
 * SRs tell us for the LSR/DLSR fields.
 */
export class RtcpReporter {
  private remoteSsrc: number | undefined;
  private lastSrMiddle = 0;
  private lastSrArrivalMs = 0;
  private packetsAtLastReport = 0;
  /** The last report block the peer sent about our stream. */
  remoteReport: RtcpReportBlock | undefined;
  remoteByeReason: string | undefined;
  remoteBye = false;

  constructor(
    private readonly cname: string,
    private readonly receiver: RtpReceiverStats,
  ) {}

  setRemoteSsrc(ssrc: number): void {
    this.remoteSsrc = ssrc;
  }

  /** Takes in a parsed compound from the peer. */
  receive(packets: readonly RtcpPacket[], nowMs: number, ourSsrc: number): void {
    for (const packet of packets) {
      if (packet.type === 'sr') {
        this.lastSrMiddle =
          ((packet.ntpSeconds & 0xffff) * 0x10000 + (packet.ntpFraction >>> 16)) >>> 0;
        this.lastSrArrivalMs = nowMs;
      }
      if (packet.type === 'sr' || packet.type === 'rr') {
        const block = packet.reports.find((report) => report.ssrc === ourSsrc);
        if (block !== undefined) {
          this.remoteReport = block;
        }
      }
      if (packet.type === 'bye') {
        this.remoteBye = true;
        this.remoteByeReason = packet.reason;
      }
    }
  }

  /** A report compound for now; `bye` appends a BYE (§6.6) with `reason`. */
  build(
    sender: RtcpSenderState,
    nowMs: number,
    wallClockMs: number,
    bye?: { reason?: string },
  ): RtcpPacket[] {
    const reports: RtcpReportBlock[] = [];
    if (this.remoteSsrc !== undefined && this.receiver.received > 0) {
      const figures = this.receiver.takeReport();
      const hasSr = this.lastSrArrivalMs > 0 || this.lastSrMiddle !== 0;
      reports.push({
        ssrc: this.remoteSsrc,
        ...figures,
        lastSenderReport: hasSr ? this.lastSrMiddle : 0,
        delaySinceLastSenderReport: hasSr
          ? Math.min(0xffffffff, Math.round(((nowMs - this.lastSrArrivalMs) * 65_536) / 1000))
          : 0,
      });
    }
    const sentSinceLast = sender.packetsSent > this.packetsAtLastReport;
    this.packetsAtLastReport = sender.packetsSent;
    const packets: RtcpPacket[] = [];
    if (sentSinceLast) {
      const seconds = Math.floor(wallClockMs / 1000);
      packets.push({
        type: 'sr',
        ssrc: sender.ssrc,
        ntpSeconds: (seconds + NTP_UNIX_OFFSET_S) >>> 0,
        ntpFraction: Math.floor(((wallClockMs - seconds * 1000) / 1000) * 2 ** 32) >>> 0,
        rtpTimestamp: sender.currentTimestamp,
        packetCount: sender.packetsSent >>> 0,
        octetCount: sender.payloadBytesSent >>> 0,
        reports,
      });
    } else {
      packets.push({ type: 'rr', ssrc: sender.ssrc, reports });
    }
    packets.push({ type: 'sdes', chunks: [{ ssrc: sender.ssrc, cname: this.cname }] });
    if (bye !== undefined) {
      packets.push({
        type: 'bye',
        ssrcs: [sender.ssrc],
        ...(bye.reason === undefined ? {} : { reason: bye.reason }),
      });
    }
    return packets;
  }
}
