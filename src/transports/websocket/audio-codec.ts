import { decodeMuLaw, encodeMuLaw } from '../../media/codecs/g711.js';
import { HOST_IS_LITTLE_ENDIAN } from '../../media/codecs/pcm16.js';

/** The websocket transport's audio encodings (`transport.audioFormat.format`). */
export type WebsocketAudioEncoding = 'pcm_s16le' | 'mulaw';

const EMPTY = new Int16Array(0);

/**
 * Client audio → PCM16 samples. Binary frames may be any size: a PCM frame with an odd byte
 * count keeps its last byte for the next frame. Each call returns a new Int16Array that owns its
 * buffer (it is transferred to the call's worker), or an empty array when there is nothing yet.
 */
export class InboundAudioDecoder {
  private carry = -1;

  constructor(private readonly encoding: WebsocketAudioEncoding) {}

  /** Whether a PCM byte is waiting for its pair. */
  get hasCarryByte(): boolean {
    return this.carry >= 0;
  }

  /** Drops a message without losing the byte alignment of the PCM stream. */
  skip(message: ArrayBuffer): void {
    if (this.encoding === 'pcm_s16le' && message.byteLength > 0) {
      const odd = ((this.carry >= 0 ? 1 : 0) + message.byteLength) % 2 === 1;
      this.carry = odd ? new Uint8Array(message)[message.byteLength - 1]! : -1;
    }
  }

  decode(message: ArrayBuffer): Int16Array {
    const bytes = new Uint8Array(message);
    if (this.encoding === 'mulaw') {
      if (bytes.length === 0) {
        return EMPTY;
      }
      const samples = new Int16Array(bytes.length);
      decodeMuLaw(bytes, samples);
      return samples;
    }
    const carried = this.carry >= 0 ? 1 : 0;
    const total = carried + bytes.length;
    const count = total >> 1;
    if (count === 0) {
      if (bytes.length === 1) {
        this.carry = bytes[0]!;
      }
      return EMPTY;
    }
    const samples = new Int16Array(count);
    let byteIndex = 0;
    let sampleIndex = 0;
    if (carried === 1) {
      samples[0] = (((bytes[0]! << 8) | this.carry) << 16) >> 16;
      byteIndex = 1;
      sampleIndex = 1;
    }
    const remaining = count - sampleIndex;
    if (HOST_IS_LITTLE_ENDIAN && byteIndex === 0) {
      // Aligned fast path: the message's buffer starts at offset 0.
      samples.set(new Int16Array(message, 0, remaining));
    } else {
      for (let i = 0; i < remaining; i++, byteIndex += 2) {
        samples[sampleIndex + i] = (((bytes[byteIndex + 1]! << 8) | bytes[byteIndex]!) << 16) >> 16;
      }
    }
    this.carry = total % 2 === 1 ? bytes[bytes.length - 1]! : -1;
    return samples;
  }
}

/**
 * PCM16 samples → client audio bytes, into one preallocated buffer per call (nothing allocated per
 * frame in steady state). The returned bytes are valid until the next encode().
 */
export class OutboundAudioEncoder {
  private buffer: Uint8Array;
  /** A cached view of the whole buffer, returned for full frames. */
  private whole: Uint8Array;

  constructor(
    private readonly encoding: WebsocketAudioEncoding,
    frameSamples: number,
  ) {
    this.buffer = new Uint8Array(frameSamples * (encoding === 'mulaw' ? 1 : 2));
    this.whole = this.buffer;
  }

  /** On a little-endian host PCM16LE needs no encoding: the samples themselves are returned. */
  encode(samples: Int16Array): Uint8Array | Int16Array {
    const bytesPerSample = this.encoding === 'mulaw' ? 1 : 2;
    if (this.encoding === 'pcm_s16le' && HOST_IS_LITTLE_ENDIAN) {
      return samples;
    }
    const length = samples.length * bytesPerSample;
    if (length > this.buffer.length) {
      this.buffer = new Uint8Array(length);
      this.whole = this.buffer;
    }
    if (this.encoding === 'mulaw') {
      encodeMuLaw(samples, this.buffer, 0, samples.length);
    } else {
      for (let i = 0, j = 0; i < samples.length; i++, j += 2) {
        const sample = samples[i]!;
        this.buffer[j] = sample & 0xff;
        this.buffer[j + 1] = (sample >> 8) & 0xff;
      }
    }
    return length === this.whole.length ? this.whole : this.buffer.subarray(0, length);
  }
}
