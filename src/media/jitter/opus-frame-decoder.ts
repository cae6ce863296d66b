import opus from '@discordjs/opus';
import type { OpusSampleRateHz } from '../codecs/opus-codec.js';
import { readPcm16le } from '../codecs/pcm16.js';
import type { JitterFrameDecoder } from './jitter-types.js';

/**
 * The longest Opus payload stored: RFC 6716 §3.2.1 caps one frame at 1275 bytes, plus its
 * TOC byte. A 20 ms mono voice packet is typically 40–160 bytes.
 */
export const MAX_OPUS_PAYLOAD_BYTES = 1276;
/** Opus durations counted in 48 kHz samples: 20 ms. */
const FRAME_48K = 960;
const SILK_FRAME_48K = [480, 960, 1920, 2880] as const;
const HYBRID_FRAME_48K = [480, 960] as const;
const CELT_FRAME_48K = [120, 240, 480, 960] as const;
const EMPTY = Buffer.alloc(0);

/**
 * The duration of an Opus packet in 48 kHz samples, from its TOC byte and frame count
 * (RFC 6716 §3.1), or −1 when the header is malformed. Reads no more than two bytes.
 */
export function opusPacketSamples48k(packet: Uint8Array, offset: number, length: number): number {
  if (length < 1) {
    return -1;
  }
  const toc = packet[offset]!;
  const config = toc >> 3;
  const frame =
    config < 12
      ? SILK_FRAME_48K[config & 3]!
      : config < 16
        ? HYBRID_FRAME_48K[config & 1]!
        : CELT_FRAME_48K[config & 3]!;
  const code = toc & 3;
  if (code === 0) {
    return frame;
  }
  if (code !== 3) {
    return 2 * frame;
  }
  if (length < 2) {
    return -1;
  }
  const count = packet[offset + 1]! & 0x3f;
  return count === 0 ? -1 : count * frame;
}

/**
 * Decodes 20 ms Opus packets (mono, at `sampleRateHz`) for a 'coded' jitter buffer. Packets of
 * any other duration are refused at push (counted invalid by the buffer): a playout slot is
 * 20 ms, and WebRTC and SIP phones send 20 ms unless told otherwise (our SDP asks for it).
 * A lost frame is concealed by libopus' own PLC: the binding can only ask for its maximum
 * (120 ms × 3) of concealment per call, of which the first 20 ms are played, so a run of losses
 * fades faster than libopus would on its own. The binding allocates each decoded frame (an
 * accepted cost for Opus; G.711 stays allocation-free).
 */
export class OpusFrameDecoder implements JitterFrameDecoder {
  readonly maxPayloadBytes = MAX_OPUS_PAYLOAD_BYTES;
  readonly frameSamples: number;
  private readonly native: opus.OpusEncoder;

  constructor(readonly sampleRateHz: OpusSampleRateHz) {
    this.frameSamples = (sampleRateHz * 20) / 1000;
    this.native = new opus.OpusEncoder(sampleRateHz, 1);
  }

  isFrame(payload: Uint8Array, offset: number, length: number): boolean {
    return opusPacketSamples48k(payload, offset, length) === FRAME_48K;
  }

  decode(payload: Uint8Array, offset: number, length: number, output: Int16Array): boolean {
    const input = Buffer.from(payload.buffer, payload.byteOffset + offset, length);
    let decoded: Buffer;
    try {
      decoded = this.native.decode(input);
    } catch {
      return false; // corrupt: the buffer conceals the frame and counts it
    }
    if (decoded.length !== this.frameSamples * 2) {
      return false;
    }
    readPcm16le(decoded, output, 0, this.frameSamples, 0);
    return true;
  }

  conceal(output: Int16Array): boolean {
    let decoded: Buffer;
    try {
      decoded = this.native.decode(EMPTY);
    } catch {
      return false;
    }
    if (decoded.length < this.frameSamples * 2) {
      return false;
    }
    readPcm16le(decoded, output, 0, this.frameSamples, 0);
    return true;
  }
}
