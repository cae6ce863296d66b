/**
 * The caller side of a SIPp load call as a pcap for SIPp's `play_pcap_audio`: the bench's caller
 * phrases (bench/fixtures/callers, 16 kHz WAVs resampled to 8 kHz with Parla's resampler),
 * G.711 μ-law in one RTP packet per 20 ms, with silence packets between the phrases as a phone
 * sends them. The phrases alternate short and long pauses after them: after a short one the next
 * phrase lands in the assistant's answer (a barge-in), after a long one the answer plays out.
 * SIPp paces the packets by the pcap's timestamps and rewrites addresses and ports; the file is
 * built at run time (it is deterministic), long enough for the call.
 */
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { encodeMuLaw } from '../../src/media/codecs/g711.js';
import { readWav } from '../../src/media/codecs/wav.js';
import { Resampler } from '../../src/media/resample/resampler.js';
import { RTP_HEADER_BYTES, writeRtpHeader } from '../../src/transports/rtp/rtp-packet.js';
import { HarnessError } from './caller-transport.js';

const CALLERS = join(dirname(fileURLToPath(import.meta.url)), '../fixtures/callers');
const RATE_HZ = 8000;
const PACKET_SAMPLES = 160;
const PACKET_MS = 20;
/** Before the first phrase: the greeting plays. */
const LEAD_SILENCE_MS = 1500;

/** [caller WAV, silence after it in ms]: one cycle, repeated until the call is covered. */
export const CALLER_CYCLE: readonly (readonly [string, number])[] = [
  ['f1-book-table.wav', 5000],
  ['m1-order-status.wav', 12_000],
  ['f2-opening-hours.wav', 5000],
  ['m2-change-address.wav', 12_000],
];

export interface CallerPcap {
  bytes: Buffer;
  durationMs: number;
  /** Where each phrase's audio starts and ends in the stream. */
  phrases: { file: string; startMs: number; endMs: number }[];
}

/** Builds a pcap of at least `minDurationMs` of caller audio. */
export async function buildCallerPcap(minDurationMs: number): Promise<CallerPcap> {
  const audio = await Promise.all(CALLER_CYCLE.map(([file]) => loadPhrase(file)));
  const silence = (ms: number): Int16Array => new Int16Array((ms * RATE_HZ) / 1000);
  const parts: Int16Array[] = [silence(LEAD_SILENCE_MS)];
  const phrases: CallerPcap['phrases'] = [];
  let samples = parts[0]!.length;
  while ((samples / RATE_HZ) * 1000 < minDurationMs) {
    CALLER_CYCLE.forEach(([file, pauseMs], i) => {
      const phrase = audio[i]!;
      const pause = silence(pauseMs);
      phrases.push({
        file,
        startMs: (samples / RATE_HZ) * 1000,
        endMs: ((samples + phrase.length) / RATE_HZ) * 1000,
      });
      parts.push(phrase, pause);
      samples += phrase.length + pause.length;
    });
  }
  const stream = new Int16Array(Math.ceil(samples / PACKET_SAMPLES) * PACKET_SAMPLES);
  let offset = 0;
  for (const part of parts) {
    stream.set(part, offset);
    offset += part.length;
  }
  return {
    bytes: rtpPcap(stream),
    durationMs: (stream.length / RATE_HZ) * 1000,
    phrases,
  };
}

async function loadPhrase(file: string): Promise<Int16Array> {
  const path = join(CALLERS, file);
  const wav = readWav(await readFile(path));
  if (wav.channelCount !== 1 || wav.sampleRateHz !== 16_000) {
    throw new HarnessError('ERR_BENCH_SCRIPT', `${path}: expected 16 kHz mono`);
  }
  const resampler = new Resampler({ inputRateHz: wav.sampleRateHz, outputRateHz: RATE_HZ });
  const out = new Int16Array(resampler.maxOutputLength(wav.samples.length));
  return out.subarray(0, resampler.process(wav.samples, out));
}

const PCAP_HEADER_BYTES = 24;
const RECORD_HEADER_BYTES = 16;
const ETHERNET_BYTES = 14;
const IPV4_BYTES = 20;
const UDP_BYTES = 8;
/** Placeholder ports and address: SIPp replaces them with the call's. */
const PLACEHOLDER_PORT = 6000;
const SSRC = 0x5150_0001;

/**
 * A libpcap file (Ethernet link type) with one IPv4/UDP/RTP packet per 20 ms of `stream`, PCMU
 * payload type 0, timestamps 20 ms apart from 0.
 */
export function rtpPcap(stream: Int16Array): Buffer {
  const packets = stream.length / PACKET_SAMPLES;
  const rtpBytes = RTP_HEADER_BYTES + PACKET_SAMPLES;
  const frameBytes = ETHERNET_BYTES + IPV4_BYTES + UDP_BYTES + rtpBytes;
  const out = Buffer.alloc(PCAP_HEADER_BYTES + packets * (RECORD_HEADER_BYTES + frameBytes));
  out.writeUInt32LE(0xa1b2c3d4, 0);
  out.writeUInt16LE(2, 4);
  out.writeUInt16LE(4, 6);
  out.writeUInt32LE(65_535, 16);
  out.writeUInt32LE(1, 20);
  let at = PCAP_HEADER_BYTES;
  for (let i = 0; i < packets; i++) {
    const atUs = i * PACKET_MS * 1000;
    out.writeUInt32LE(Math.floor(atUs / 1_000_000), at);
    out.writeUInt32LE(atUs % 1_000_000, at + 4);
    out.writeUInt32LE(frameBytes, at + 8);
    out.writeUInt32LE(frameBytes, at + 12);
    at += RECORD_HEADER_BYTES;
    out.writeUInt16BE(0x0800, at + 12);
    at += ETHERNET_BYTES;
    const ip = at;
    out[ip] = 0x45;
    out.writeUInt16BE(IPV4_BYTES + UDP_BYTES + rtpBytes, ip + 2);
    out.writeUInt16BE(i & 0xffff, ip + 4);
    out.writeUInt16BE(0x4000, ip + 6);
    out[ip + 8] = 64;
    out[ip + 9] = 17;
    out.writeUInt32BE(0x7f00_0001, ip + 12);
    out.writeUInt32BE(0x7f00_0001, ip + 16);
    out.writeUInt16BE(ipv4Checksum(out.subarray(ip, ip + IPV4_BYTES)), ip + 10);
    at += IPV4_BYTES;
    out.writeUInt16BE(PLACEHOLDER_PORT, at);
    out.writeUInt16BE(PLACEHOLDER_PORT, at + 2);
    out.writeUInt16BE(UDP_BYTES + rtpBytes, at + 4);
    at += UDP_BYTES;
    writeRtpHeader(out.subarray(at, at + RTP_HEADER_BYTES), {
      marker: i === 0,
      payloadType: 0,
      sequenceNumber: i & 0xffff,
      timestamp: (i * PACKET_SAMPLES) >>> 0,
      ssrc: SSRC,
    });
    encodeMuLaw(stream, out, i * PACKET_SAMPLES, PACKET_SAMPLES, at + RTP_HEADER_BYTES);
    at += rtpBytes;
  }
  return out;
}

/** The IPv4 header checksum (RFC 791); over a header that carries a correct one, 0. */
export function ipv4Checksum(header: Uint8Array): number {
  let sum = 0;
  for (let i = 0; i < header.length; i += 2) {
    sum += (header[i]! << 8) | header[i + 1]!;
  }
  while (sum > 0xffff) {
    sum = (sum & 0xffff) + (sum >>> 16);
  }
  return ~sum & 0xffff;
}
