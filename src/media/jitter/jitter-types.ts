import type { AudioFrame } from '../audio-frame.js';

/** The public types of JitterBuffer. */

/**
 * RTP payloads the buffer takes: G.711 µ-law (PT 0), A-law (PT 8) and big-endian L16 are decoded
 * as they arrive; 'coded' payloads (stateful codecs: G.722, Opus) are kept as they came and
 * decoded at playout, in sequence order, by the options' `decoder`.
 */
export type JitterPayloadFormat = 'pcmu' | 'pcma' | 'l16' | 'coded';

/**
 * Decodes the frames of a 'coded' stream at playout. Frames reach it strictly in sequence order
 * (lost ones through conceal()), which is what ADPCM and Opus decoder state needs.
 */
export interface JitterFrameDecoder {
  /** Largest payload stored; longer ones are counted invalid. */
  readonly maxPayloadBytes: number;
  /** Whether a payload is one 20 ms frame, judged without decoding (checked on push). */
  isFrame(payload: Uint8Array, offset: number, length: number): boolean;
  /** Decodes one frame into `output` (frameSamples samples); false when it is corrupt. */
  decode(payload: Uint8Array, offset: number, length: number, output: Int16Array): boolean;
  /**
   * The codec's own concealment of one lost frame into `output`; false when it has none, and
   * the buffer repeats and fades the last frame instead.
   */
  conceal(output: Int16Array): boolean;
}

export interface JitterBufferOptions {
  payloadFormat: JitterPayloadFormat;
  /** Required with payloadFormat 'coded'. */
  decoder?: JitterFrameDecoder;
  /** Sample rate of the frames pulled. Default 8000. */
  sampleRateHz?: number;
  /** The RTP clock of the pushed timestamps (for the jitter estimate). Default sampleRateHz. */
  clockRateHz?: number;
  /** Least playout delay the buffer aims for. Default 40 ms. */
  minDelayMs?: number;
  /** Most audio the buffer holds; older frames are dropped beyond it. Default 200 ms. */
  maxDelayMs?: number;
  /** Target delay is one frame plus this many times the RFC 3550 jitter. Default 4. */
  jitterMultiplier?: number;
  /** Frames over which a lost frame's predecessor is repeated and faded out. Default 3. */
  fadeFrames?: number;
}

/** What push() did with a packet. */
export type JitterPushResult = 'accepted' | 'duplicate' | 'late' | 'invalid';

/** What a pulled frame holds: received audio, concealment, or silence while (re)buffering. */
export type JitterFrameKind = 'audio' | 'concealed' | 'silence';

export interface JitterBufferFrame extends AudioFrame {
  kind: JitterFrameKind;
  /** The 16-bit RTP sequence number played, or −1 for concealment and silence. */
  sequenceNumber: number;
}

/** Counters since construction. A live object: read it, do not keep references to change. */
export interface JitterBufferStats {
  /** Well-formed packets pushed, duplicates and late ones included. */
  received: number;
  duplicates: number;
  /** Packets that arrived after their turn to play had passed. */
  late: number;
  /** Sequence numbers that never arrived in time. */
  lost: number;
  /** Frames pulled while playing that were repeat-and-fade or silence in place of audio. */
  concealed: number;
  /** Received frames dropped to bring the delay down. */
  discarded: number;
  /** Silent frames inserted (in quiet passages) to bring the delay up. */
  inserted: number;
  /** Packets with a payload that is not one 20 ms frame. */
  invalid: number;
  /** 'coded' frames the decoder refused at playout (concealed instead). */
  decodeErrors: number;
  /** Audio buffered ahead of playout, gaps included. */
  currentDepthMs: number;
  targetDepthMs: number;
  /** RFC 3550 interarrival jitter estimate. */
  jitterMs: number;
}
