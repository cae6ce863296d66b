import { Int16RingBuffer } from '../../media/framing/ring-buffer.js';

/** Text chunks whose audio can be queued at once; more waits for playout to catch up. */
const MAX_SEGMENTS = 256;

/**
 * The assistant's audio waiting to go out, handed out one frame per media tick, with the text
 * each stretch of audio speaks. On barge-in `clear()` drops everything not yet played, so output
 * stops within the current frame, and `playedChars` says how much of the message was heard.
 *
 * Each text chunk's audio is a segment: `beginSegment(chars)`, then `write()` its audio as it
 * streams in, then `endSegment()`. A segment still streaming counts as played in proportion to
 * the audio received so far. State lives in typed arrays: no allocation per frame.
 */
export class PlayoutBuffer {
  readonly sampleRateHz: number;
  readonly frameSamples: number;
  readonly #ring: Int16RingBuffer;
  /** Per segment (ring-indexed): chars, first sample (message-relative) and samples so far. */
  readonly #segChars = new Int32Array(MAX_SEGMENTS);
  readonly #segStart = new Float64Array(MAX_SEGMENTS);
  readonly #segSamples = new Float64Array(MAX_SEGMENTS);
  #segHead = 0;
  #segCount = 0;
  #segOpen = false;
  /** Samples of the current message written and played (message-relative counters). */
  #writtenSamples = 0;
  #playedSamples = 0;
  /** Chars of segments fully played and dropped from the table. */
  #retiredChars = 0;

  constructor(sampleRateHz: number, frameDurationMs = 20, capacitySeconds = 30) {
    if (!Number.isInteger(sampleRateHz) || sampleRateHz < 8000 || sampleRateHz > 48000) {
      throw new RangeError(
        `sampleRateHz must be an integer from 8000 to 48000, got ${sampleRateHz}`,
      );
    }
    if (frameDurationMs !== 10 && frameDurationMs !== 20) {
      throw new RangeError(`frameDurationMs must be 10 or 20, got ${frameDurationMs}`);
    }
    this.sampleRateHz = sampleRateHz;
    this.frameSamples = (sampleRateHz * frameDurationMs) / 1000;
    this.#ring = new Int16RingBuffer(Math.ceil(sampleRateHz * capacitySeconds));
  }

  /** Samples queued and not yet played. */
  get queuedSamples(): number {
    return this.#ring.length;
  }

  /** Room left, in samples; a producer waits when its next chunk does not fit. */
  get freeSamples(): number {
    return this.#segCount === MAX_SEGMENTS ? 0 : this.#ring.free;
  }

  /** Starts the audio of a text chunk of `chars` characters. */
  beginSegment(chars: number): void {
    if (this.#segOpen) {
      this.endSegment();
    }
    if (this.#segCount === MAX_SEGMENTS) {
      throw new RangeError('too many text segments queued; wait for playout');
    }
    const index = (this.#segHead + this.#segCount) % MAX_SEGMENTS;
    this.#segChars[index] = chars;
    this.#segStart[index] = this.#writtenSamples;
    this.#segSamples[index] = 0;
    this.#segCount += 1;
    this.#segOpen = true;
  }

  /** Queues audio of the open segment. Throws a RangeError when it does not fit (check freeSamples). */
  write(samples: Int16Array, offset = 0, length = samples.length - offset): void {
    if (!this.#segOpen) {
      this.beginSegment(0);
    }
    this.#ring.write(samples, offset, length);
    this.#writtenSamples += length;
    const last = (this.#segHead + this.#segCount - 1) % MAX_SEGMENTS;
    this.#segSamples[last] = (this.#segSamples[last] ?? 0) + length;
  }

  endSegment(): void {
    this.#segOpen = false;
  }

  /**
   * Fills `frame` (frameSamples long) with the next audio. Returns the samples of real audio in
   * it (the rest is silence); 0 means nothing was queued.
   */
  pullFrame(frame: Int16Array): number {
    const got = this.#ring.read(frame, 0, this.frameSamples);
    frame.fill(0, got, this.frameSamples);
    this.#playedSamples += got;
    this.#retirePlayedSegments();
    return got;
  }

  /** Characters of the current message heard so far (a partly played chunk counts in proportion). */
  get playedChars(): number {
    let chars = this.#retiredChars;
    for (let i = 0; i < this.#segCount; i += 1) {
      const index = (this.#segHead + i) % MAX_SEGMENTS;
      const start = this.#segStart[index] ?? 0;
      const samples = this.#segSamples[index] ?? 0;
      const played = this.#playedSamples - start;
      if (played <= 0 || samples === 0) {
        break;
      }
      const segChars = this.#segChars[index] ?? 0;
      chars += played >= samples ? segChars : Math.floor((segChars * played) / samples);
    }
    return chars;
  }

  /** Barge-in: drops all queued audio at once; returns the characters that were heard. */
  clear(): number {
    const heard = this.playedChars;
    this.#ring.clear();
    this.#writtenSamples = this.#playedSamples;
    this.#segCount = 0;
    this.#segOpen = false;
    this.#retiredChars = heard;
    return heard;
  }

  /** Starts counting a new assistant message. */
  startMessage(): void {
    this.clear();
    this.#writtenSamples = 0;
    this.#playedSamples = 0;
    this.#retiredChars = 0;
  }

  #retirePlayedSegments(): void {
    // A finished segment that has been fully played is folded into #retiredChars.
    while (this.#segCount > (this.#segOpen ? 1 : 0)) {
      const index = this.#segHead;
      const end = (this.#segStart[index] ?? 0) + (this.#segSamples[index] ?? 0);
      if (this.#playedSamples < end) {
        return;
      }
      this.#retiredChars += this.#segChars[index] ?? 0;
      this.#segHead = (index + 1) % MAX_SEGMENTS;
      this.#segCount -= 1;
    }
  }
}
