import { G722Decoder } from '../codecs/g722.js';
import type { JitterFrameDecoder } from './jitter-types.js';

/** 20 ms of G.722: 320 samples at 16 kHz, two per byte. */
const FRAME_BYTES = 160;

/**
 * Decodes 20 ms G.722 frames for a 'coded' jitter buffer. The ADPCM state runs across frames,
 * which is why the buffer decodes at playout, in sequence order. G.722 has no concealment of its
 * own: a lost frame is repeated and faded by the buffer.
 */
export class G722FrameDecoder implements JitterFrameDecoder {
  readonly maxPayloadBytes = FRAME_BYTES;
  private readonly decoder = new G722Decoder();

  isFrame(_payload: Uint8Array, _offset: number, length: number): boolean {
    return length === FRAME_BYTES;
  }

  decode(payload: Uint8Array, offset: number, length: number, output: Int16Array): boolean {
    return this.decoder.decode(payload, offset, length, output, 0) === 2 * length;
  }

  conceal(_output: Int16Array): boolean {
    return false;
  }
}
