import { checkRange } from '../check-range.js';
import { InterarrivalJitter } from './interarrival-jitter.js';
import { CodedSlots, PcmSlots, type JitterSlots } from './jitter-slots.js';
import type {
  JitterBufferFrame,
  JitterBufferOptions,
  JitterBufferStats,
  JitterPayloadFormat,
  JitterPushResult,
} from './jitter-types.js';
import { SEQ16_MODULUS, Seq16Unwrapper } from './seq16.js';

export type * from './jitter-types.js';

const FRAME_MS = 20;
/** Sustained excess or deficit of delay, in pulls, before the buffer adapts. */
const ADAPT_AFTER_FRAMES = 25;
/** Sustained excess after which a frame is dropped even if it is not quiet. */
const FORCE_SHRINK_AFTER_FRAMES = 150;
/** Mean absolute sample value below which a frame counts as quiet (about −42 dBFS). */
const QUIET_LEVEL = 256;
/** A jump ahead of more than this many frames restarts the stream instead of skipping. */
const RESYNC_FRAMES = 250;
const HISTORY_SIZE = 256;

/**
 * A jitter buffer for RTP audio in 20 ms frames. push() each packet as it arrives, with its
 * arrival time; pull() once per 20 ms tick for the next frame to play. Packets are reordered by
 * (wrap-aware) sequence number; duplicates and packets whose turn has passed are dropped. A
 * missing frame is concealed by repeating the last frame while fading it out over `fadeFrames`
 * frames, then by silence. The target delay follows the RFC 3550 jitter estimate between
 * minDelayMs and maxDelayMs: it grows on underruns (playout stalls until audio arrives) and by
 * inserting silence in quiet passages, and shrinks by dropping quiet frames. After a long
 * underrun the buffer rebuffers to the target delay before playing again.
 *
 * G.711 and L16 are decoded on push. Stateful codecs ('coded', with a JitterFrameDecoder) are
 * stored as they came and decoded on pull, in sequence order, with the codec's own concealment
 * of lost frames when it has one (see jitter-slots.ts).
 *
 * All storage is preallocated; push() and pull() allocate nothing. pull() returns the same frame
 * object every time.
 */
export class JitterBuffer {
  readonly payloadFormat: JitterPayloadFormat;
  readonly sampleRateHz: number;
  readonly frameSamples: number;
  readonly minDelayMs: number;
  readonly maxDelayMs: number;
  readonly capacityFrames: number;
  readonly stats: JitterBufferStats;
  private readonly jitterMultiplier: number;
  private readonly unwrapper: Seq16Unwrapper;
  private readonly slots: JitterSlots;
  private readonly slotSeq: Float64Array;
  private readonly slotFilled: Uint8Array;
  private readonly history: Float64Array;
  private readonly jitter: InterarrivalJitter;
  private readonly frame: JitterBufferFrame;
  private started: boolean;
  private playing: boolean;
  /** False until playout first starts (or after a resync): reordering may still move the start. */
  private playoutStarted: boolean;
  /** Frames played out while the head frame was missing and nothing later had arrived. */
  private stallFrames: number;
  private nextSeq: number;
  private highestSeq: number;
  /**
   * [0]: mean absolute sample value of the last frame played (0 for concealment and silence).
   * Doubles live in typed arrays: a class field holding a double is boxed, so each store would
   * allocate.
   */
  private readonly lastLevel: Float64Array;
  private excessRun: number;
  private deficitRun: number;
  private outputPtsMs: number;

  constructor(options: JitterBufferOptions) {
    const sampleRateHz = options.sampleRateHz ?? 8000;
    const minDelayMs = options.minDelayMs ?? 40;
    const maxDelayMs = options.maxDelayMs ?? 200;
    const frameSamples = (sampleRateHz * FRAME_MS) / 1000;
    if (!Number.isInteger(frameSamples) || frameSamples <= 0) {
      throw new RangeError(`20 ms at ${sampleRateHz} Hz is not a whole number of samples`);
    }
    if (!(minDelayMs >= FRAME_MS && maxDelayMs >= minDelayMs && maxDelayMs <= 5000)) {
      throw new RangeError('delays must satisfy 20 <= minDelayMs <= maxDelayMs <= 5000');
    }
    this.payloadFormat = options.payloadFormat;
    this.sampleRateHz = sampleRateHz;
    this.frameSamples = frameSamples;
    this.minDelayMs = minDelayMs;
    this.maxDelayMs = maxDelayMs;
    this.capacityFrames = Math.ceil(maxDelayMs / FRAME_MS) + 1;
    this.jitterMultiplier = options.jitterMultiplier ?? 4;
    this.unwrapper = new Seq16Unwrapper();
    this.slots = newSlots(options, this.capacityFrames, frameSamples);
    this.slotSeq = new Float64Array(this.capacityFrames);
    this.slotFilled = new Uint8Array(this.capacityFrames);
    this.history = new Float64Array(HISTORY_SIZE).fill(-1);
    this.jitter = new InterarrivalJitter(options.clockRateHz ?? sampleRateHz);
    this.frame = {
      samples: new Int16Array(frameSamples),
      sampleRateHz,
      ptsMs: 0,
      kind: 'silence',
      sequenceNumber: -1,
    };
    this.stats = {
      received: 0,
      duplicates: 0,
      late: 0,
      lost: 0,
      concealed: 0,
      discarded: 0,
      inserted: 0,
      invalid: 0,
      decodeErrors: 0,
      currentDepthMs: 0,
      targetDepthMs: roundUpToFrame(minDelayMs),
      jitterMs: 0,
    };
    this.started = false;
    this.playing = false;
    this.playoutStarted = false;
    this.stallFrames = 0;
    this.nextSeq = 0;
    this.highestSeq = 0;
    this.lastLevel = new Float64Array(1);
    this.excessRun = 0;
    this.deficitRun = 0;
    this.outputPtsMs = 0;
  }

  /**
   * Offers one RTP packet: its 16-bit sequence number, 32-bit timestamp, payload (by default all
   * of `packet`; pass an offset and length to read it out of a whole datagram) and arrival time
   * on any millisecond clock that the caller keeps for the stream.
   */
  push(
    sequenceNumber: number,
    rtpTimestamp: number,
    packet: Uint8Array,
    arrivalMs: number,
    payloadOffset = 0,
    payloadLength = packet.length - payloadOffset,
  ): JitterPushResult {
    if (!Number.isInteger(sequenceNumber) || sequenceNumber < 0 || sequenceNumber > 0xffff) {
      throw new RangeError(`RTP sequence number must be 0–65535, got ${sequenceNumber}`);
    }
    checkRange(packet.length, payloadOffset, payloadLength);
    const stats = this.stats;
    if (!this.slots.isFrame(packet, payloadOffset, payloadLength)) {
      stats.invalid++;
      return 'invalid';
    }
    stats.received++;
    this.updateTarget(rtpTimestamp, arrivalMs);

    // Offset by one wrap so that packets reordered from before the first stay positive.
    const seq = this.unwrapper.unwrap(sequenceNumber) + SEQ16_MODULUS;
    if (!this.started) {
      this.started = true;
      this.nextSeq = seq;
      this.highestSeq = seq;
    }
    if (seq < this.nextSeq) {
      if (!this.playoutStarted && this.highestSeq - seq < this.capacityFrames) {
        this.nextSeq = seq; // reordered before playout began: start from the earlier one
      } else if (this.history[seq % HISTORY_SIZE] === seq) {
        stats.duplicates++;
        return 'duplicate';
      } else {
        stats.late++;
        return 'late';
      }
    } else if (seq - this.nextSeq >= this.capacityFrames) {
      if (seq - this.nextSeq > RESYNC_FRAMES) {
        this.clearSlots();
        this.nextSeq = seq;
        this.highestSeq = seq;
        this.playing = false;
        this.playoutStarted = false;
        this.stallFrames = 0;
      } else {
        this.skipTo(seq - this.capacityFrames + 1);
      }
    }
    const slot = seq % this.capacityFrames;
    if (this.slotFilled[slot] === 1 && this.slotSeq[slot] === seq) {
      stats.duplicates++;
      return 'duplicate';
    }
    this.slots.store(slot, packet, payloadOffset, payloadLength);
    this.slotFilled[slot] = 1;
    this.slotSeq[slot] = seq;
    this.history[seq % HISTORY_SIZE] = seq;
    if (seq > this.highestSeq) {
      this.highestSeq = seq;
    }
    this.updateDepth();
    return 'accepted';
  }

  /** The frame to play for this 20 ms tick. The returned object is reused by the next call. */
  pull(): JitterBufferFrame {
    const frame = this.frame;
    const stats = this.stats;
    frame.ptsMs = this.outputPtsMs;
    this.outputPtsMs += FRAME_MS;
    this.skipStalledLosses();
    const depthMs = this.depthMs();
    if (!this.playing) {
      if (!this.started || depthMs < stats.targetDepthMs) {
        if (this.playoutStarted) {
          this.stallFrames++;
        }
        return this.emitSilence();
      }
      this.playing = true;
      this.playoutStarted = true;
      this.excessRun = 0;
      this.deficitRun = 0;
    }
    this.adapt(depthMs);
    if (this.deficitRun >= ADAPT_AFTER_FRAMES && this.lastLevel[0]! < QUIET_LEVEL) {
      this.deficitRun = 0;
      stats.inserted++;
      return this.emitSilence();
    }
    if (this.excessRun >= ADAPT_AFTER_FRAMES) {
      const slot = this.nextSeq % this.capacityFrames;
      if (this.isFilled(slot, this.nextSeq)) {
        // A coded frame is decoded here, in turn, whether it then plays or is dropped.
        this.slots.prepare(slot);
      }
      if (
        this.isFilled(slot, this.nextSeq) &&
        (this.slots.levels[slot]! < QUIET_LEVEL || this.excessRun >= FORCE_SHRINK_AFTER_FRAMES)
      ) {
        this.slotFilled[slot] = 0;
        this.nextSeq++;
        this.excessRun = 0;
        stats.discarded++;
      }
    }
    const slot = this.nextSeq % this.capacityFrames;
    if (this.isFilled(slot, this.nextSeq)) {
      const decoded = this.slots.play(slot, frame.samples);
      this.lastLevel[0] = this.slots.levels[slot]!;
      this.slotFilled[slot] = 0;
      frame.kind = decoded ? 'audio' : 'concealed';
      frame.sequenceNumber = decoded ? this.nextSeq & 0xffff : -1;
      if (!decoded) {
        stats.concealed++;
        stats.decodeErrors = this.slots.decodeErrors;
      }
      this.nextSeq++;
      this.stallFrames = 0;
      this.updateDepth();
      return frame;
    }
    if (this.highestSeq >= this.nextSeq) {
      // Later audio is here, so this frame is lost: conceal it and move on.
      stats.lost++;
      this.nextSeq++;
    } else {
      // Underrun: nothing to play yet. Stall (the delay grows by a frame) and conceal. After
      // maxDelayMs of it the stream has paused rather than lost packets: rebuffer to the target
      // delay before playing again.
      this.stallFrames++;
      if (this.stallFrames > this.capacityFrames && this.slots.faded) {
        this.playing = false;
        return this.emitSilence();
      }
    }
    this.conceal();
    this.updateDepth();
    return frame;
  }

  /**
   * Frames concealed during a stall already filled the time of the frames that were missing.
   * When later audio turns up and the head is still missing, skip that many missing frames as
   * lost instead of concealing them a second time.
   */
  private skipStalledLosses(): void {
    while (this.stallFrames > 0 && this.highestSeq > this.nextSeq) {
      const slot = this.nextSeq % this.capacityFrames;
      if (this.isFilled(slot, this.nextSeq)) {
        break;
      }
      this.stats.lost++;
      this.nextSeq++;
      this.stallFrames--;
    }
  }

  private conceal(): void {
    const frame = this.frame;
    this.slots.conceal(frame.samples);
    this.stats.concealed++;
    frame.kind = 'concealed';
    frame.sequenceNumber = -1;
    this.lastLevel[0] = 0;
  }

  private emitSilence(): JitterBufferFrame {
    const frame = this.frame;
    frame.samples.fill(0);
    frame.kind = 'silence';
    frame.sequenceNumber = -1;
    this.lastLevel[0] = 0;
    return frame;
  }

  private adapt(depthMs: number): void {
    const target = this.stats.targetDepthMs;
    this.excessRun = depthMs > target + FRAME_MS ? this.excessRun + 1 : 0;
    this.deficitRun = depthMs < target ? this.deficitRun + 1 : 0;
  }

  /** Moves the target delay to one frame plus jitterMultiplier × jitter, within the bounds. */
  private updateTarget(rtpTimestamp: number, arrivalMs: number): void {
    const stats = this.stats;
    this.jitter.update(rtpTimestamp, arrivalMs);
    stats.jitterMs = this.jitter.jitterMs;
    const wanted = FRAME_MS + this.jitterMultiplier * stats.jitterMs;
    const clamped = wanted < this.minDelayMs ? this.minDelayMs : wanted;
    stats.targetDepthMs = roundUpToFrame(clamped > this.maxDelayMs ? this.maxDelayMs : clamped);
  }

  /** Drops frames before `seq`, counting received ones as discarded and missing ones as lost. */
  private skipTo(seq: number): void {
    while (this.nextSeq < seq) {
      const slot = this.nextSeq % this.capacityFrames;
      if (this.isFilled(slot, this.nextSeq)) {
        this.slotFilled[slot] = 0;
        this.stats.discarded++;
      } else {
        this.stats.lost++;
      }
      this.nextSeq++;
    }
  }

  private clearSlots(): void {
    for (let slot = 0; slot < this.capacityFrames; slot++) {
      if (this.slotFilled[slot] === 1) {
        this.slotFilled[slot] = 0;
        this.stats.discarded++;
      }
    }
  }

  private isFilled(slot: number, seq: number): boolean {
    return this.slotFilled[slot] === 1 && this.slotSeq[slot] === seq;
  }

  private depthMs(): number {
    const frames = this.highestSeq - this.nextSeq + 1;
    return this.started && frames > 0 ? frames * FRAME_MS : 0;
  }

  private updateDepth(): void {
    this.stats.currentDepthMs = this.depthMs();
  }
}

function roundUpToFrame(ms: number): number {
  return Math.ceil(ms / FRAME_MS) * FRAME_MS;
}

function newSlots(
  options: JitterBufferOptions,
  capacityFrames: number,
  frameSamples: number,
): JitterSlots {
  const fadeFrames = options.fadeFrames ?? 3;
  if (options.payloadFormat !== 'coded') {
    return new PcmSlots(options.payloadFormat, capacityFrames, frameSamples, fadeFrames);
  }
  if (options.decoder === undefined) {
    throw new RangeError("payloadFormat 'coded' needs a decoder");
  }
  return new CodedSlots(options.decoder, capacityFrames, frameSamples, fadeFrames);
}
