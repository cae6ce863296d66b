import opus from '@discordjs/opus';
import { ParlaError } from '../../core/errors.js';
import { checkRange } from '../check-range.js';
import { readPcm16le } from './pcm16.js';

/** The rates Opus runs at natively. */
export type OpusSampleRateHz = 8000 | 12000 | 16000 | 24000 | 48000;

export interface OpusCodecOptions {
  sampleRateHz: OpusSampleRateHz;
  /** Target bitrate; default libopus' automatic choice. */
  bitrateBps?: number;
}

const OPUS_RATES_HZ: readonly number[] = [8000, 12000, 16000, 24000, 48000];
const FRAME_DURATION_MS = 20;
/** The longest Opus packet holds 120 ms. */
const MAX_PACKET_DURATION_MS = 120;

/**
 * Mono Opus in 20 ms frames over `@discordjs/opus` (libopus). One instance holds one encoder and
 * one decoder, each with its own state: use one instance per direction of a stream.
 *
 * The input side reuses a preallocated buffer; the binding itself allocates each encoded packet
 * and each decoded frame (a copy out of its internal buffer), so this codec is not allocation-free.
 */
export class OpusCodec {
  readonly sampleRateHz: OpusSampleRateHz;
  readonly frameDurationMs = FRAME_DURATION_MS;
  /** Samples in one 20 ms frame. */
  readonly frameSamples: number;
  /** Samples in the longest frame decode() can return (120 ms). */
  readonly maxDecodedSamples: number;
  private readonly native: opus.OpusEncoder;
  private readonly pcmBytes: Buffer;
  private readonly pcm: Int16Array;

  constructor(options: OpusCodecOptions) {
    if (!OPUS_RATES_HZ.includes(options.sampleRateHz)) {
      throw new RangeError(
        `Opus sample rate must be one of ${OPUS_RATES_HZ.join(', ')} Hz, got ${options.sampleRateHz}`,
      );
    }
    this.sampleRateHz = options.sampleRateHz;
    this.frameSamples = (options.sampleRateHz * FRAME_DURATION_MS) / 1000;
    this.maxDecodedSamples = (options.sampleRateHz * MAX_PACKET_DURATION_MS) / 1000;
    this.native = new opus.OpusEncoder(options.sampleRateHz, 1);
    if (options.bitrateBps !== undefined) {
      if (!Number.isInteger(options.bitrateBps) || options.bitrateBps < 500) {
        throw new RangeError(`Opus bitrate must be an integer of at least 500 bit/s`);
      }
      this.native.setBitrate(options.bitrateBps);
    }
    this.pcmBytes = Buffer.alloc(this.frameSamples * 2);
    this.pcm = new Int16Array(this.pcmBytes.buffer, this.pcmBytes.byteOffset, this.frameSamples);
  }

  /** Encodes one 20 ms frame, `frameSamples` samples of `samples` from `offset`, into a packet. */
  encode(samples: Int16Array, offset = 0): Buffer {
    checkRange(samples.length, offset, this.frameSamples);
    const pcm = this.pcm;
    for (let i = 0; i < pcm.length; i++) {
      pcm[i] = samples[offset + i]!;
    }
    return this.native.encode(this.pcmBytes);
  }

  /**
   * Decodes one packet into `output` at `outputOffset`; returns the number of samples written
   * (frameSamples for the 20 ms packets encode() makes; up to maxDecodedSamples for others).
   * A corrupt packet, or one longer than the room in `output`, raises ERR_BAD_REQUEST.
   */
  decode(packet: Uint8Array, output: Int16Array, outputOffset = 0): number {
    checkRange(output.length, outputOffset, 0);
    if (packet.length === 0) {
      // libopus would treat an empty packet as a loss and conceal 120 ms of audio.
      throw new ParlaError('ERR_BAD_REQUEST', 'empty Opus packet');
    }
    const input = Buffer.isBuffer(packet)
      ? packet
      : Buffer.from(packet.buffer, packet.byteOffset, packet.byteLength);
    let decoded: Buffer;
    try {
      decoded = this.native.decode(input);
    } catch (error) {
      throw new ParlaError('ERR_BAD_REQUEST', 'corrupt Opus packet', { cause: error });
    }
    const sampleCount = decoded.length >> 1;
    if (sampleCount > output.length - outputOffset) {
      throw new ParlaError(
        'ERR_BAD_REQUEST',
        `Opus packet decodes to ${sampleCount} samples, more than the ${output.length - outputOffset} the output holds`,
      );
    }
    return readPcm16le(decoded, output, 0, sampleCount, outputOffset);
  }
}
