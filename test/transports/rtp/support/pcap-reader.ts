import { readFileSync } from 'node:fs';

/** One UDP datagram out of a capture, with its capture time. */
export interface PcapUdpPacket {
  timeMs: number;
  sourceAddress: string;
  sourcePort: number;
  destinationAddress: string;
  destinationPort: number;
  payload: Uint8Array;
}

const LINKTYPE_ETHERNET = 1;
const LINKTYPE_RAW = 101;
const LINKTYPE_LINUX_SLL = 113;

/**
 * A small reader of classic libpcap files (both byte orders, µs and ns resolution) that
 * returns the IPv4 UDP datagrams over Ethernet, Linux cooked or raw IP links. Enough for the
 * captures SIPp ships; anything else is skipped.
 */
export function readPcapUdp(path: string): PcapUdpPacket[] {
  const data = readFileSync(path);
  const magic = data.readUInt32LE(0);
  let littleEndian: boolean;
  let nanos = false;
  if (magic === 0xa1b2c3d4 || magic === 0xa1b23c4d) {
    littleEndian = true;
    nanos = magic === 0xa1b23c4d;
  } else if (magic === 0xd4c3b2a1 || magic === 0x4d3cb2a1) {
    littleEndian = false;
    nanos = magic === 0x4d3cb2a1;
  } else {
    throw new Error(`${path} is not a pcap file`);
  }
  const u32 = (offset: number): number =>
    littleEndian ? data.readUInt32LE(offset) : data.readUInt32BE(offset);
  const linkType = u32(20);
  const packets: PcapUdpPacket[] = [];
  let offset = 24;
  while (offset + 16 <= data.length) {
    const seconds = u32(offset);
    const fraction = u32(offset + 4);
    const capturedBytes = u32(offset + 8);
    const start = offset + 16;
    offset = start + capturedBytes;
    if (offset > data.length) {
      break;
    }
    let ip: number;
    if (linkType === LINKTYPE_ETHERNET) {
      if (data.readUInt16BE(start + 12) !== 0x0800) {
        continue;
      }
      ip = start + 14;
    } else if (linkType === LINKTYPE_LINUX_SLL) {
      if (data.readUInt16BE(start + 14) !== 0x0800) {
        continue;
      }
      ip = start + 16;
    } else if (linkType === LINKTYPE_RAW) {
      ip = start;
    } else {
      throw new Error(`unsupported pcap link type ${linkType}`);
    }
    if (data[ip]! >> 4 !== 4 || data[ip + 9] !== 17) {
      continue;
    }
    const udp = ip + (data[ip]! & 0x0f) * 4;
    const udpLength = data.readUInt16BE(udp + 4);
    packets.push({
      timeMs: seconds * 1000 + (nanos ? fraction / 1e6 : fraction / 1e3),
      sourceAddress: data.subarray(ip + 12, ip + 16).join('.'),
      destinationAddress: data.subarray(ip + 16, ip + 20).join('.'),
      sourcePort: data.readUInt16BE(udp),
      destinationPort: data.readUInt16BE(udp + 2),
      payload: new Uint8Array(data.subarray(udp + 8, Math.min(udp + udpLength, offset))),
    });
  }
  return packets;
}
