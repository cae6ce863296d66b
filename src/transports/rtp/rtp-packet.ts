/**
 * RTP packets (RFC 3550 §5.1): parsing into a reused view and writing into a caller's buffer.
 * Neither allocates: a session parses every datagram into the same RtpPacketView and writes
 * every outgoing packet into one preallocated buffer.
 */

export const RTP_VERSION = 2;
export const RTP_HEADER_BYTES = 12;
export const RTP_MAX_CSRC = 15;
/** The largest datagram accepted or written: UDP's payload limit over IPv4. */
export const RTP_MAX_PACKET_BYTES = 65_507;

/** Why a datagram is not an acceptable RTP packet. Stable codes, counted by the session. */
export type RtpErrorCode =
  | 'RTP_TOO_SHORT'
  | 'RTP_TOO_LARGE'
  | 'RTP_BAD_VERSION'
  | 'RTP_BAD_PADDING'
  | 'RTP_BAD_CSRC'
  | 'RTP_BAD_EXTENSION'
  | 'RTP_IS_RTCP';

/** The fields of one parsed packet. Offsets index the buffer the packet was parsed from. */
export class RtpPacketView {
  padding = false;
  extension = false;
  csrcCount = 0;
  marker = false;
  payloadType = 0;
  sequenceNumber = 0;
  timestamp = 0;
  ssrc = 0;
  readonly csrcs = new Uint32Array(RTP_MAX_CSRC);
  /** The header extension's 16-bit profile word, when `extension`. */
  extensionProfile = 0;
  extensionOffset = 0;
  extensionLength = 0;
  payloadOffset = 0;
  payloadLength = 0;
  /** Padding bytes at the end (the last byte's value), when `padding`. */
  paddingLength = 0;
}

/**
 * Parses `length` bytes of `data` into `out`. Returns null when the packet is acceptable, or
 * the reason it is not (and `out` is then partly overwritten). RTCP packets sent to the RTP
 * port (payload types 72–76 with the marker bit, RFC 5761 §4) are reported as RTP_IS_RTCP.
 */
export function parseRtpPacket(
  data: Uint8Array,
  out: RtpPacketView,
  length = data.length,
): RtpErrorCode | null {
  if (length < RTP_HEADER_BYTES) {
    return 'RTP_TOO_SHORT';
  }
  if (length > RTP_MAX_PACKET_BYTES || length > data.length) {
    return 'RTP_TOO_LARGE';
  }
  const b0 = data[0]!;
  const b1 = data[1]!;
  if (b0 >> 6 !== RTP_VERSION) {
    return 'RTP_BAD_VERSION';
  }
  if (b1 >= 200 && b1 <= 204) {
    return 'RTP_IS_RTCP';
  }
  out.padding = (b0 & 0x20) !== 0;
  out.extension = (b0 & 0x10) !== 0;
  out.csrcCount = b0 & 0x0f;
  out.marker = (b1 & 0x80) !== 0;
  out.payloadType = b1 & 0x7f;
  out.sequenceNumber = (data[2]! << 8) | data[3]!;
  out.timestamp = readUint32(data, 4);
  out.ssrc = readUint32(data, 8);
  let offset = RTP_HEADER_BYTES;
  if (offset + out.csrcCount * 4 > length) {
    return 'RTP_BAD_CSRC';
  }
  for (let i = 0; i < out.csrcCount; i++) {
    out.csrcs[i] = readUint32(data, offset);
    offset += 4;
  }
  out.extensionProfile = 0;
  out.extensionOffset = offset;
  out.extensionLength = 0;
  if (out.extension) {
    if (offset + 4 > length) {
      return 'RTP_BAD_EXTENSION';
    }
    out.extensionProfile = (data[offset]! << 8) | data[offset + 1]!;
    const words = (data[offset + 2]! << 8) | data[offset + 3]!;
    offset += 4;
    if (offset + words * 4 > length) {
      return 'RTP_BAD_EXTENSION';
    }
    out.extensionOffset = offset;
    out.extensionLength = words * 4;
    offset += words * 4;
  }
  let end = length;
  out.paddingLength = 0;
  if (out.padding) {
    const paddingLength = data[length - 1]!;
    // The count includes itself, so it is at least 1, and it cannot eat into the header.
    if (paddingLength === 0 || offset + paddingLength > length) {
      return 'RTP_BAD_PADDING';
    }
    out.paddingLength = paddingLength;
    end -= paddingLength;
  }
  out.payloadOffset = offset;
  out.payloadLength = end - offset;
  return null;
}

/** The fields a sender sets; no CSRCs, extension or padding (Parla is an end system). */
export interface RtpHeaderFields {
  marker: boolean;
  payloadType: number;
  sequenceNumber: number;
  timestamp: number;
  ssrc: number;
}

/**
 * Writes a 12-byte header and then `payloadLength` bytes of `payload` (from `payloadOffset`)
 * into `out`. Returns the packet length. Throws RangeError on out-of-range fields or a buffer
 * too small: those are programming errors, not network input.
 */
export function writeRtpPacket(
  out: Uint8Array,
  header: RtpHeaderFields,
  payload: Uint8Array,
  payloadOffset = 0,
  payloadLength = payload.length - payloadOffset,
): number {
  const length = RTP_HEADER_BYTES + payloadLength;
  if (length > out.length || length > RTP_MAX_PACKET_BYTES) {
    throw new RangeError(`RTP packet of ${length} bytes does not fit`);
  }
  if (payloadOffset < 0 || payloadOffset + payloadLength > payload.length) {
    throw new RangeError('payload range is outside the payload buffer');
  }
  writeRtpHeader(out, header);
  // A loop, not out.set(payload.subarray(…)): subarray would allocate a view per packet.
  for (let i = 0; i < payloadLength; i++) {
    out[RTP_HEADER_BYTES + i] = payload[payloadOffset + i]!;
  }
  return length;
}

/** Writes only the 12-byte header (when the payload is encoded in place after it). */
export function writeRtpHeader(out: Uint8Array, header: RtpHeaderFields): void {
  const { payloadType, sequenceNumber, timestamp, ssrc } = header;
  if (!(Number.isInteger(payloadType) && payloadType >= 0 && payloadType <= 127)) {
    throw new RangeError(`RTP payload type must be 0–127, got ${payloadType}`);
  }
  if (!(Number.isInteger(sequenceNumber) && sequenceNumber >= 0 && sequenceNumber <= 0xffff)) {
    throw new RangeError(`RTP sequence number must be 0–65535, got ${sequenceNumber}`);
  }
  if (!isUint32(timestamp) || !isUint32(ssrc)) {
    throw new RangeError('RTP timestamp and SSRC must be 32-bit unsigned integers');
  }
  out[0] = RTP_VERSION << 6;
  out[1] = (header.marker ? 0x80 : 0) | payloadType;
  out[2] = sequenceNumber >> 8;
  out[3] = sequenceNumber & 0xff;
  writeUint32(out, 4, timestamp);
  writeUint32(out, 8, ssrc);
}

export function readUint32(data: Uint8Array, offset: number): number {
  return (
    ((data[offset]! << 24) |
      (data[offset + 1]! << 16) |
      (data[offset + 2]! << 8) |
      data[offset + 3]!) >>>
    0
  );
}

export function writeUint32(out: Uint8Array, offset: number, value: number): void {
  out[offset] = value >>> 24;
  out[offset + 1] = (value >>> 16) & 0xff;
  out[offset + 2] = (value >>> 8) & 0xff;
  out[offset + 3] = value & 0xff;
}

function isUint32(value: number): boolean {
  return Number.isInteger(value) && value >= 0 && value <= 0xffffffff;
}

/** Adds to a 32-bit RTP timestamp, wrapping. */
export function timestampAdd(timestamp: number, delta: number): number {
  return (timestamp + delta) >>> 0;
}
