import { decodeALaw, decodeMuLaw } from '../codecs/g711.js';
import { readPcm16be } from '../codecs/pcm16.js';
import { LossConcealer } from './loss-concealer.js';
import type { JitterFrameDecoder, JitterPayloadFormat } from './jitter-types.js';

/**
 * The frame storage of a JitterBuffer: one slot per frame of its capacity, and what turns a
 * slot into the frame played (or a lost frame into concealment). The buffer decides which slot
 * plays when; the slots hold the data. Levels (mean absolute sample value, for the buffer's
 * quiet-frame decisions) live in a Float64Array so that storing them allocates nothing.
 */
export interface JitterSlots {
  /** levels[slot], valid after prepare(slot). */
  readonly levels: Float64Array;
  /** True once concealment has faded out (it is silence now). */
  readonly faded: boolean;
  /** Frames refused by the decoder at playout, since construction. */
  readonly decodeErrors: number;
  /** Whether a payload is one frame, before it is stored. */
  isFrame(packet: Uint8Array, offset: number, length: number): boolean;
  store(slot: number, packet: Uint8Array, offset: number, length: number): void;
  /** Makes levels[slot] valid. Called only for the next frame to play, in sequence order. */
  prepare(slot: number): void;
  /** Writes the slot's frame into `output`; false when it could not be decoded (concealed). */
  play(slot: number, output: Int16Array): boolean;
  /** Writes the concealment of one lost frame into `output`. */
  conceal(output: Int16Array): void;
}

/** G.711 and L16: decoded when stored, so playout is a copy. */
export class PcmSlots implements JitterSlots {
  readonly levels: Float64Array;
  readonly decodeErrors = 0;
  private readonly samples: Int16Array;
  private readonly payloadBytes: number;
  private readonly concealer: LossConcealer;

  constructor(
    private readonly format: Exclude<JitterPayloadFormat, 'coded'>,
    capacityFrames: number,
    private readonly frameSamples: number,
    fadeFrames: number,
  ) {
    this.levels = new Float64Array(capacityFrames);
    this.samples = new Int16Array(capacityFrames * frameSamples);
    this.payloadBytes = format === 'l16' ? frameSamples * 2 : frameSamples;
    this.concealer = new LossConcealer(frameSamples, fadeFrames);
  }

  get faded(): boolean {
    return this.concealer.faded;
  }

  isFrame(_packet: Uint8Array, _offset: number, length: number): boolean {
    return length === this.payloadBytes;
  }

  store(slot: number, packet: Uint8Array, offset: number, _length: number): void {
    const n = this.frameSamples;
    const at = slot * n;
    if (this.format === 'pcmu') {
      decodeMuLaw(packet, this.samples, offset, n, at);
    } else if (this.format === 'pcma') {
      decodeALaw(packet, this.samples, offset, n, at);
    } else {
      readPcm16be(packet, this.samples, offset, n, at);
    }
    storeMeanAbs(this.samples, at, n, this.levels, slot);
  }

  prepare(_slot: number): void {}

  play(slot: number, output: Int16Array): boolean {
    this.concealer.play(this.samples, slot * this.frameSamples, output);
    return true;
  }

  conceal(output: Int16Array): void {
    this.concealer.conceal(output);
  }
}

/**
 * Stateful codecs (G.722, Opus): the payload is kept as it came, in preallocated storage
 * bounded by the decoder's maxPayloadBytes, and decoded only when its turn to play comes, so
 * the decoder sees the frames in sequence order. A lost frame gets the codec's own concealment
 * for up to `fadeFrames` frames when it has one, else repeat-and-fade; then silence.
 */
export class CodedSlots implements JitterSlots {
  readonly levels: Float64Array;
  decodeErrors = 0;
  private readonly payloads: Uint8Array;
  private readonly payloadLengths: Int32Array;
  private readonly decoded: Int16Array;
  /** The slot whose frame `decoded` holds (prepared ahead of play), or −1. */
  private decodedSlot = -1;
  private decodedOk = false;
  private readonly concealer: LossConcealer;
  /** Consecutive frames concealed by the codec itself. */
  private codecConcealRun = 0;

  constructor(
    private readonly decoder: JitterFrameDecoder,
    capacityFrames: number,
    private readonly frameSamples: number,
    private readonly fadeFrames: number,
  ) {
    const max = decoder.maxPayloadBytes;
    if (!Number.isInteger(max) || max <= 0) {
      throw new RangeError(`maxPayloadBytes must be a positive integer, got ${max}`);
    }
    this.levels = new Float64Array(capacityFrames);
    this.payloads = new Uint8Array(capacityFrames * max);
    this.payloadLengths = new Int32Array(capacityFrames);
    this.decoded = new Int16Array(frameSamples);
    this.concealer = new LossConcealer(frameSamples, fadeFrames);
  }

  get faded(): boolean {
    return this.concealer.faded || this.codecConcealRun >= this.fadeFrames;
  }

  isFrame(packet: Uint8Array, offset: number, length: number): boolean {
    return (
      length > 0 &&
      length <= this.decoder.maxPayloadBytes &&
      this.decoder.isFrame(packet, offset, length)
    );
  }

  store(slot: number, packet: Uint8Array, offset: number, length: number): void {
    const at = slot * this.decoder.maxPayloadBytes;
    for (let i = 0; i < length; i++) {
      this.payloads[at + i] = packet[offset + i]!;
    }
    this.payloadLengths[slot] = length;
    if (this.decodedSlot === slot) {
      this.decodedSlot = -1;
    }
  }

  prepare(slot: number): void {
    if (this.decodedSlot === slot) {
      return;
    }
    const at = slot * this.decoder.maxPayloadBytes;
    this.decodedOk = this.decoder.decode(
      this.payloads,
      at,
      this.payloadLengths[slot]!,
      this.decoded,
    );
    this.decodedSlot = slot;
    if (this.decodedOk) {
      storeMeanAbs(this.decoded, 0, this.frameSamples, this.levels, slot);
    } else {
      this.decodeErrors++;
      this.levels[slot] = 0;
    }
  }

  play(slot: number, output: Int16Array): boolean {
    this.prepare(slot);
    this.decodedSlot = -1;
    if (!this.decodedOk) {
      this.conceal(output);
      return false;
    }
    this.concealer.play(this.decoded, 0, output);
    this.codecConcealRun = 0;
    return true;
  }

  conceal(output: Int16Array): void {
    if (this.codecConcealRun >= this.fadeFrames) {
      output.fill(0, 0, this.frameSamples); // the codec's concealment has run its course
    } else if (this.decoder.conceal(output)) {
      this.codecConcealRun++;
    } else {
      this.concealer.conceal(output); // no concealment of its own: repeat-and-fade
    }
  }
}

/** Stores the mean absolute value of a frame in levels[slot] (not returned: see above). */
function storeMeanAbs(
  samples: Int16Array,
  offset: number,
  length: number,
  levels: Float64Array,
  slot: number,
): void {
  let sum = 0;
  for (let i = 0; i < length; i++) {
    const s = samples[offset + i]!;
    sum += s < 0 ? -s : s;
  }
  levels[slot] = sum / length;
}
