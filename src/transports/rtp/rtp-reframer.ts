import type { JitterBuffer } from '../../media/jitter/jitter-buffer.js';

/** Frames staged at once; a frame still incomplete when its slot is needed again is lost. */
const SLOTS = 16;
/** A timestamp jump beyond this many frames restarts the frame grid. */
const RESYNC_FRAMES = 1000;

/**
 * Cuts G.711 and G.722 packets of any ptime (10, 30, 40 ms… as peers send them) into the 20 ms
 * frames the jitter buffer takes, on a grid anchored at the first packet's RTP timestamp. A
 * frame is pushed once all its bytes have arrived, with a synthetic sequence number (its frame
 * index) so the jitter buffer still reorders and conceals, and RFC 4733 packets between audio
 * packets leave no gap. Packets of exactly 20 ms on the grid pass straight through. Both codecs
 * carry one byte per RTP clock unit (G.722: one byte codes two 16 kHz samples, and the ADPCM
 * decodes byte by byte, so any byte boundary is a valid cut). All storage preallocated.
 *
 * Opus packets cannot be cut: pushPacket() places whole packets on the same grid.
 */
export class RtpReframer {
  /** RTP clock units (= payload bytes for push()) in one frame. */
  private readonly frameSamples: number;
  private readonly staged: Uint8Array;
  private readonly covered: Uint8Array;
  private readonly coveredCount: Int32Array;
  private readonly slotFrame: Float64Array;
  private readonly anchor = new Float64Array(2);
  private started = false;
  /** The highest frame index staged; a restarted grid continues after it. */
  private highestFrame = -1;

  /** Packets of pushPacket() off the frame grid, dropped. */
  misalignedPackets = 0;

  /** `frameUnits`: RTP clock units per frame; default the buffer's frame (G.711). */
  constructor(
    private readonly jitter: Pick<JitterBuffer, 'frameSamples' | 'push'>,
    frameUnits = jitter.frameSamples,
  ) {
    this.frameSamples = frameUnits;
    this.staged = new Uint8Array(SLOTS * this.frameSamples);
    this.covered = new Uint8Array(SLOTS * this.frameSamples);
    this.coveredCount = new Int32Array(SLOTS);
    this.slotFrame = new Float64Array(SLOTS).fill(-1);
  }

  /**
   * Starts a new grid (after an SSRC change), continuing the frame numbering so the jitter
   * buffer sees one stream.
   */
  reset(): void {
    this.started = false;
    this.slotFrame.fill(-1);
    this.coveredCount.fill(0);
  }

  private anchorAt(timestamp: number): void {
    this.started = true;
    this.anchor[0] = timestamp;
    this.anchor[1] = (this.highestFrame + 1) * this.frameSamples;
  }

  /** Pushes the whole frames this packet completes. Returns how many were pushed. */
  push(timestamp: number, data: Uint8Array, offset: number, length: number, nowMs: number): number {
    const n = this.frameSamples;
    const position = this.position(timestamp);
    let pushed = 0;
    let index = 0;
    while (index < length) {
      const sample = position + index;
      const frame = Math.floor(sample / n);
      const within = sample - frame * n;
      const take = Math.min(n - within, length - index);
      if (frame >= 0) {
        pushed += this.stage(frame, within, data, offset + index, take, nowMs);
      }
      index += take;
    }
    return pushed;
  }

  /**
   * Pushes one whole packet (Opus) as the frame its timestamp falls on. Returns 1, or 0 for a
   * packet off the grid (counted); the jitter buffer refuses packets that are not 20 ms.
   */
  pushPacket(
    timestamp: number,
    data: Uint8Array,
    offset: number,
    length: number,
    nowMs: number,
  ): number {
    const n = this.frameSamples;
    const position = this.position(timestamp);
    const frame = Math.floor(position / n);
    if (frame < 0 || position !== frame * n) {
      this.misalignedPackets++;
      return 0;
    }
    if (frame > this.highestFrame) {
      this.highestFrame = frame;
    }
    this.jitter.push(frame % 0x10000, (frame * n) >>> 0, data, nowMs, offset, length);
    return 1;
  }

  /** The packet's clock position on the grid, anchoring or re-anchoring the grid as needed. */
  private position(timestamp: number): number {
    if (!this.started) {
      this.anchorAt(timestamp);
    }
    // Position relative to the anchor, wrap-aware (a signed 32-bit difference).
    let delta = (timestamp - this.anchor[0]!) | 0;
    if (Math.abs(delta) > RESYNC_FRAMES * this.frameSamples) {
      this.reset();
      this.anchorAt(timestamp);
      delta = 0;
    }
    const position = this.anchor[1]! + delta;
    // Keep the anchor near the stream so the 32-bit difference never overflows.
    this.anchor[0] = timestamp;
    this.anchor[1] = position;
    return position;
  }

  private stage(
    frame: number,
    within: number,
    data: Uint8Array,
    offset: number,
    count: number,
    nowMs: number,
  ): number {
    const n = this.frameSamples;
    const slot = frame % SLOTS;
    const base = slot * n;
    if (this.slotFrame[slot]! > frame) {
      return 0; // older than the frame now staged there: too late
    }
    if (this.slotFrame[slot] !== frame) {
      this.slotFrame[slot] = frame;
      this.coveredCount[slot] = 0;
      this.covered.fill(0, base, base + n);
    }
    if (this.coveredCount[slot]! >= n) {
      return 0; // already complete and pushed: a duplicate
    }
    for (let i = 0; i < count; i++) {
      const at = base + within + i;
      this.staged[at] = data[offset + i]!;
      if (this.covered[at] === 0) {
        this.covered[at] = 1;
        this.coveredCount[slot]!++;
      }
    }
    if (frame > this.highestFrame) {
      this.highestFrame = frame;
    }
    if (this.coveredCount[slot] !== n) {
      return 0;
    }
    const sequenceNumber = frame % 0x10000;
    const timestamp = (frame * n) >>> 0;
    this.jitter.push(sequenceNumber, timestamp, this.staged, nowMs, base, n);
    return 1;
  }
}
