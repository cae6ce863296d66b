import { readUint32, writeUint32 } from './rtp-packet.js';

/**
 * RTCP compound packets (RFC 3550 §6): SR, RR, SDES (CNAME), BYE; other types are kept as
 * their type only. Parsing checks the compound rules of Appendix A.2. RTCP goes out once every
 * few seconds, so these functions allocate freely.
 */

export const RTCP_SR = 200;
export const RTCP_RR = 201;
export const RTCP_SDES = 202;
export const RTCP_BYE = 203;
const SDES_CNAME = 1;
const MAX_REPORT_BLOCKS = 31;

export type RtcpErrorCode =
  | 'RTCP_TOO_SHORT'
  | 'RTCP_BAD_VERSION'
  | 'RTCP_BAD_LENGTH'
  | 'RTCP_BAD_FIRST_PACKET'
  | 'RTCP_BAD_PADDING'
  | 'RTCP_BAD_SDES'
  | 'RTCP_BAD_BYE';

export interface RtcpReportBlock {
  ssrc: number;
  /** In 1/256. */
  fractionLost: number;
  cumulativeLost: number;
  extendedHighestSequence: number;
  /** Timestamp units. */
  jitter: number;
  /** Middle 32 bits of the NTP timestamp of the last SR received from this source, or 0. */
  lastSenderReport: number;
  /** Since that SR, in 1/65536 s, or 0. */
  delaySinceLastSenderReport: number;
}

export interface RtcpSenderReport {
  type: 'sr';
  ssrc: number;
  ntpSeconds: number;
  ntpFraction: number;
  rtpTimestamp: number;
  packetCount: number;
  octetCount: number;
  reports: RtcpReportBlock[];
}

export interface RtcpReceiverReport {
  type: 'rr';
  ssrc: number;
  reports: RtcpReportBlock[];
}

export interface RtcpSourceDescription {
  type: 'sdes';
  chunks: { ssrc: number; cname?: string }[];
}

export interface RtcpBye {
  type: 'bye';
  ssrcs: number[];
  reason?: string;
}

export interface RtcpOther {
  type: 'other';
  packetType: number;
}

export type RtcpPacket =
  RtcpSenderReport | RtcpReceiverReport | RtcpSourceDescription | RtcpBye | RtcpOther;

export type RtcpParseResult =
  { ok: true; packets: RtcpPacket[] } | { ok: false; code: RtcpErrorCode };

export function parseRtcpCompound(data: Uint8Array): RtcpParseResult {
  if (data.length < 8 || data.length % 4 !== 0) {
    return { ok: false, code: 'RTCP_TOO_SHORT' };
  }
  const packets: RtcpPacket[] = [];
  let offset = 0;
  while (offset < data.length) {
    if (offset + 4 > data.length) {
      return { ok: false, code: 'RTCP_BAD_LENGTH' };
    }
    const b0 = data[offset]!;
    const packetType = data[offset + 1]!;
    const length = (((data[offset + 2]! << 8) | data[offset + 3]!) + 1) * 4;
    if (b0 >> 6 !== 2) {
      return { ok: false, code: 'RTCP_BAD_VERSION' };
    }
    if (offset === 0 && packetType !== RTCP_SR && packetType !== RTCP_RR) {
      return { ok: false, code: 'RTCP_BAD_FIRST_PACKET' };
    }
    const end = offset + length;
    if (end > data.length) {
      return { ok: false, code: 'RTCP_BAD_LENGTH' };
    }
    let bodyEnd = end;
    if ((b0 & 0x20) !== 0) {
      const padding = data[end - 1]!;
      // Only the last packet of a compound may be padded (A.2).
      if (end !== data.length || padding === 0 || padding > length - 4) {
        return { ok: false, code: 'RTCP_BAD_PADDING' };
      }
      bodyEnd -= padding;
    }
    const count = b0 & 0x1f;
    const body = data.subarray(offset + 4, bodyEnd);
    const packet = parseOne(packetType, count, body);
    if (typeof packet === 'string') {
      return { ok: false, code: packet };
    }
    packets.push(packet);
    offset = end;
  }
  return { ok: true, packets };
}

function parseOne(type: number, count: number, body: Uint8Array): RtcpPacket | RtcpErrorCode {
  if (type === RTCP_SR || type === RTCP_RR) {
    const fixed = type === RTCP_SR ? 24 : 4;
    if (body.length < fixed + count * 24) {
      return 'RTCP_BAD_LENGTH';
    }
    const reports: RtcpReportBlock[] = [];
    for (let i = 0; i < count; i++) {
      reports.push(readBlock(body, fixed + i * 24));
    }
    const ssrc = readUint32(body, 0);
    if (type === RTCP_RR) {
      return { type: 'rr', ssrc, reports };
    }
    return {
      type: 'sr',
      ssrc,
      ntpSeconds: readUint32(body, 4),
      ntpFraction: readUint32(body, 8),
      rtpTimestamp: readUint32(body, 12),
      packetCount: readUint32(body, 16),
      octetCount: readUint32(body, 20),
      reports,
    };
  }
  if (type === RTCP_SDES) {
    const chunks: { ssrc: number; cname?: string }[] = [];
    let at = 0;
    for (let i = 0; i < count; i++) {
      if (at + 4 > body.length) {
        return 'RTCP_BAD_SDES';
      }
      const chunk: { ssrc: number; cname?: string } = { ssrc: readUint32(body, at) };
      at += 4;
      for (;;) {
        if (at >= body.length) {
          return 'RTCP_BAD_SDES';
        }
        const item = body[at]!;
        if (item === 0) {
          at = (at + 4) & ~3; // the null item and padding to the next 32-bit boundary
          break;
        }
        if (at + 2 > body.length || at + 2 + body[at + 1]! > body.length) {
          return 'RTCP_BAD_SDES';
        }
        const text = Buffer.from(body.subarray(at + 2, at + 2 + body[at + 1]!)).toString('utf8');
        if (item === SDES_CNAME) {
          chunk.cname = text;
        }
        at += 2 + body[at + 1]!;
      }
      chunks.push(chunk);
    }
    return { type: 'sdes', chunks };
  }
  if (type === RTCP_BYE) {
    if (body.length < count * 4) {
      return 'RTCP_BAD_BYE';
    }
    const ssrcs: number[] = [];
    for (let i = 0; i < count; i++) {
      ssrcs.push(readUint32(body, i * 4));
    }
    const bye: RtcpBye = { type: 'bye', ssrcs };
    const at = count * 4;
    if (at < body.length) {
      const length = body[at]!;
      if (at + 1 + length > body.length) {
        return 'RTCP_BAD_BYE';
      }
      bye.reason = Buffer.from(body.subarray(at + 1, at + 1 + length)).toString('utf8');
    }
    return bye;
  }
  return { type: 'other', packetType: type };
}

function readBlock(body: Uint8Array, at: number): RtcpReportBlock {
  const lost = (body[at + 5]! << 16) | (body[at + 6]! << 8) | body[at + 7]!;
  return {
    ssrc: readUint32(body, at),
    fractionLost: body[at + 4]!,
    cumulativeLost: lost & 0x800000 ? lost - 0x1000000 : lost,
    extendedHighestSequence: readUint32(body, at + 8),
    jitter: readUint32(body, at + 12),
    lastSenderReport: readUint32(body, at + 16),
    delaySinceLastSenderReport: readUint32(body, at + 20),
  };
}

/** Serializes a compound packet. Throws RangeError on fields that do not fit. */
export function serializeRtcpCompound(packets: readonly RtcpPacket[]): Buffer {
  return Buffer.concat(packets.map(serializeOne));
}

function serializeOne(packet: RtcpPacket): Buffer {
  switch (packet.type) {
    case 'sr':
    case 'rr': {
      if (packet.reports.length > MAX_REPORT_BLOCKS) {
        throw new RangeError('at most 31 report blocks per report');
      }
      const fixed = packet.type === 'sr' ? 24 : 4;
      const out = Buffer.alloc(4 + fixed + packet.reports.length * 24);
      header(out, packet.type === 'sr' ? RTCP_SR : RTCP_RR, packet.reports.length);
      writeUint32(out, 4, packet.ssrc);
      if (packet.type === 'sr') {
        writeUint32(out, 8, packet.ntpSeconds);
        writeUint32(out, 12, packet.ntpFraction);
        writeUint32(out, 16, packet.rtpTimestamp);
        writeUint32(out, 20, packet.packetCount >>> 0);
        writeUint32(out, 24, packet.octetCount >>> 0);
      }
      packet.reports.forEach((block, i) => writeBlock(out, 4 + fixed + i * 24, block));
      return out;
    }
    case 'sdes': {
      const parts = packet.chunks.map((chunk) => {
        const cname = Buffer.from(chunk.cname ?? '', 'utf8').subarray(0, 255);
        const size = (4 + 2 + cname.length + 1 + 3) & ~3;
        const out = Buffer.alloc(size);
        writeUint32(out, 0, chunk.ssrc);
        out[4] = SDES_CNAME;
        out[5] = cname.length;
        cname.copy(out, 6);
        return out;
      });
      const out = Buffer.concat([Buffer.alloc(4), ...parts]);
      header(out, RTCP_SDES, packet.chunks.length);
      return out;
    }
    case 'bye': {
      const reason = Buffer.from(packet.reason ?? '', 'utf8').subarray(0, 255);
      const reasonBytes = packet.reason === undefined ? 0 : (1 + reason.length + 3) & ~3;
      const out = Buffer.alloc(4 + packet.ssrcs.length * 4 + reasonBytes);
      header(out, RTCP_BYE, packet.ssrcs.length);
      packet.ssrcs.forEach((ssrc, i) => writeUint32(out, 4 + i * 4, ssrc));
      if (packet.reason !== undefined) {
        out[4 + packet.ssrcs.length * 4] = reason.length;
        reason.copy(out, 5 + packet.ssrcs.length * 4);
      }
      return out;
    }
    case 'other':
      throw new RangeError(`cannot serialize RTCP packet type ${packet.packetType}`);
  }
}

function header(out: Buffer, type: number, count: number): void {
  out[0] = 0x80 | count;
  out[1] = type;
  out.writeUInt16BE(out.length / 4 - 1, 2);
}

function writeBlock(out: Buffer, at: number, block: RtcpReportBlock): void {
  writeUint32(out, at, block.ssrc);
  out[at + 4] = block.fractionLost & 0xff;
  const lost = block.cumulativeLost & 0xffffff;
  out[at + 5] = lost >> 16;
  out[at + 6] = (lost >> 8) & 0xff;
  out[at + 7] = lost & 0xff;
  writeUint32(out, at + 8, block.extendedHighestSequence);
  writeUint32(out, at + 12, block.jitter);
  writeUint32(out, at + 16, block.lastSenderReport);
  writeUint32(out, at + 20, block.delaySinceLastSenderReport);
}

/** The RFC 3550 §6.3.1 interval: the 5 s minimum (2.5 s before the first) and randomisation. */
export function rtcpIntervalMs(options: {
  members: number;
  senders: number;
  weSent: boolean;
  averageRtcpSizeBytes: number;
  /** Session bandwidth in octets per second (G.711: 64 kbit/s ≈ 8,000 + headers). */
  sessionBandwidthBytesPerS: number;
  initial: boolean;
  random: () => number;
}): number {
  const rtcpBandwidth = options.sessionBandwidthBytesPerS * 0.05;
  let members = options.members;
  let bandwidth = rtcpBandwidth;
  if (options.senders <= members * 0.25) {
    if (options.weSent) {
      bandwidth = rtcpBandwidth * 0.25;
      members = options.senders;
    } else {
      bandwidth = rtcpBandwidth * 0.75;
      members -= options.senders;
    }
  }
  const minimumS = options.initial ? 2.5 : 5;
  const deterministicS = Math.max(minimumS, (options.averageRtcpSizeBytes * members) / bandwidth);
  // Randomised over [0.5, 1.5] (§6.3.1). Without timer reconsideration (two members, fixed
  // roles) the e − 3/2 compensation does not apply, so the mean stays at the minimum.
  return deterministicS * (0.5 + options.random()) * 1000;
}
