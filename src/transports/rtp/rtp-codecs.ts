import { encodeG711, type G711Law } from '../../media/codecs/g711.js';
import { G722Encoder } from '../../media/codecs/g722.js';
import { OpusCodec } from '../../media/codecs/opus-codec.js';
import type { JitterBufferOptions } from '../../media/jitter/jitter-types.js';
import { MAX_OPUS_PAYLOAD_BYTES, OpusFrameDecoder } from '../../media/jitter/opus-frame-decoder.js';
import { G722FrameDecoder } from '../../media/jitter/g722-frame-decoder.js';

/** The audio codecs an RtpSession runs (names as SDP writes them). */
export type RtpCodecName = 'PCMU' | 'PCMA' | 'G722' | 'opus';

export const RTP_CODEC_NAMES: readonly RtpCodecName[] = ['PCMU', 'PCMA', 'G722', 'opus'];

/** Encodes one 20 ms PCM frame into an RTP payload. */
export interface RtpPayloadEncoder {
  /** Writes the payload of `samples` (one frame) at `outOffset`; returns its length in bytes. */
  encode(samples: Int16Array, out: Uint8Array, outOffset: number): number;
}

/** How a codec maps onto RTP: its PCM rate, RTP clock and 20 ms frame in each. */
export interface RtpCodecProfile {
  readonly name: RtpCodecName;
  /** The rate of the PCM frames sent and pulled. */
  readonly sampleRateHz: number;
  /** The RTP timestamp clock (RFC 3551; 8000 for G.722, 48000 for Opus per RFC 7587). */
  readonly clockRateHz: number;
  /** PCM samples in 20 ms. */
  readonly frameSamples: number;
  /** RTP timestamp units in 20 ms. */
  readonly frameClockUnits: number;
  /**
   * 'bytes': one payload byte per RTP clock unit, so packets of any ptime can be cut into
   * 20 ms frames (G.711, G.722); 'packets': frames are whole 20 ms packets (Opus).
   */
  readonly framing: 'bytes' | 'packets';
  /** The largest payload sent (the size of the send buffers). */
  readonly maxPayloadBytes: number;
  newEncoder(): RtpPayloadEncoder;
  /** The jitter buffer settings that decode this codec. */
  jitterOptions(): Pick<
    JitterBufferOptions,
    'payloadFormat' | 'decoder' | 'sampleRateHz' | 'clockRateHz'
  >;
}

/** Wideband Opus for speech: transparent at this rate, and well inside any SIP peer's budget. */
const OPUS_BITRATE_BPS = 32_000;
const OPUS_SAMPLE_RATE_HZ = 16_000;

class G711PayloadEncoder implements RtpPayloadEncoder {
  constructor(
    private readonly law: G711Law,
    private readonly frameSamples: number,
  ) {}

  encode(samples: Int16Array, out: Uint8Array, outOffset: number): number {
    return encodeG711(this.law, samples, out, 0, this.frameSamples, outOffset);
  }
}

class G722PayloadEncoder implements RtpPayloadEncoder {
  private readonly encoder = new G722Encoder();

  encode(samples: Int16Array, out: Uint8Array, outOffset: number): number {
    return this.encoder.encode(samples, 0, samples.length, out, outOffset);
  }
}

/** The binding returns a new Buffer per packet (see opus-codec.ts); it is copied into `out`. */
class OpusPayloadEncoder implements RtpPayloadEncoder {
  private readonly codec = new OpusCodec({
    sampleRateHz: OPUS_SAMPLE_RATE_HZ,
    bitrateBps: OPUS_BITRATE_BPS,
  });

  encode(samples: Int16Array, out: Uint8Array, outOffset: number): number {
    const packet = this.codec.encode(samples);
    if (packet.length > MAX_OPUS_PAYLOAD_BYTES) {
      throw new RangeError(`Opus packet of ${packet.length} bytes exceeds the send buffer`);
    }
    out.set(packet, outOffset);
    return packet.length;
  }
}

function g711(name: 'PCMU' | 'PCMA'): RtpCodecProfile {
  const law: G711Law = name === 'PCMU' ? 'mulaw' : 'alaw';
  return {
    name,
    sampleRateHz: 8000,
    clockRateHz: 8000,
    frameSamples: 160,
    frameClockUnits: 160,
    framing: 'bytes',
    maxPayloadBytes: 160,
    newEncoder: () => new G711PayloadEncoder(law, 160),
    jitterOptions: () => ({ payloadFormat: name === 'PCMU' ? 'pcmu' : 'pcma', sampleRateHz: 8000 }),
  };
}

const PROFILES: Readonly<Record<RtpCodecName, RtpCodecProfile>> = {
  PCMU: g711('PCMU'),
  PCMA: g711('PCMA'),
  // 16 kHz audio on the 8000 Hz clock of RFC 3551 §4.5.2: 160 bytes and units per 20 ms.
  G722: {
    name: 'G722',
    sampleRateHz: 16_000,
    clockRateHz: 8000,
    frameSamples: 320,
    frameClockUnits: 160,
    framing: 'bytes',
    maxPayloadBytes: 160,
    newEncoder: () => new G722PayloadEncoder(),
    jitterOptions: () => ({
      payloadFormat: 'coded',
      decoder: new G722FrameDecoder(),
      sampleRateHz: 16_000,
      clockRateHz: 8000,
    }),
  },
  // RFC 7587: the RTP clock is 48 kHz whatever the audio bandwidth; we code at 16 kHz mono.
  opus: {
    name: 'opus',
    sampleRateHz: OPUS_SAMPLE_RATE_HZ,
    clockRateHz: 48_000,
    frameSamples: 320,
    frameClockUnits: 960,
    framing: 'packets',
    maxPayloadBytes: MAX_OPUS_PAYLOAD_BYTES,
    newEncoder: () => new OpusPayloadEncoder(),
    jitterOptions: () => ({
      payloadFormat: 'coded',
      decoder: new OpusFrameDecoder(OPUS_SAMPLE_RATE_HZ),
      sampleRateHz: OPUS_SAMPLE_RATE_HZ,
      clockRateHz: 48_000,
    }),
  },
};

/** The profile of a codec; a RangeError for a name that is not one of RTP_CODEC_NAMES. */
export function rtpCodecProfile(name: string): RtpCodecProfile {
  const profile = Object.hasOwn(PROFILES, name) ? PROFILES[name as RtpCodecName] : undefined;
  if (profile === undefined) {
    throw new RangeError(`unsupported RTP codec ${name}`);
  }
  return profile;
}
