import { WavFileWriter, type WrittenWav } from './wav-file-writer.js';

export interface CallRecordingOptions {
  /** Where the mixed mono file goes (omit for none). */
  readonly monoPath?: string;
  /** Where the stereo file goes: customer left, assistant right (omit for none). */
  readonly stereoPath?: string;
  /** A monotonic clock, ms: places each track's audio on the call's timeline. */
  readonly nowMs: () => number;
  /** Audio a track may hold ahead of the other before silence is forced in. Default 5 s. */
  readonly bufferSeconds?: number;
}

export interface RecordingResult {
  readonly sampleRateHz: number;
  readonly frames: number;
  readonly durationMs: number;
  readonly mono: WrittenWav | null;
  readonly stereo: WrittenWav | null;
  /** Samples not recorded because they came at another rate than the first audio. */
  readonly droppedSamples: number;
  /** Bytes not written because the disk fell more than MAX_PENDING_BYTES behind. */
  readonly droppedBytes: number;
}

/** Frames per block handed to the file writers (one allocation per block, not per frame). */
const BLOCK_SECONDS = 0.5;

class Track {
  readonly ring: Int16Array;
  /** Samples appended since the start (audio and inserted silence). */
  total = 0;

  constructor(capacity: number) {
    this.ring = new Int16Array(capacity);
  }
}

/**
 * The call's recording, written while the call runs. The customer's and the assistant's audio
 * arrive separately and unevenly (the assistant is silent between turns); each chunk is placed
 * on the call's timeline by the clock: a track that fell behind it gets silence up to the
 * chunk's arrival time. Both tracks are mixed (mono) and interleaved (stereo) as far as both
 * have audio, so memory stays at most `bufferSeconds` per track; a track running further ahead
 * forces silence into the other one.
 */
export class CallRecording {
  readonly #options: CallRecordingOptions;
  readonly #bufferSeconds: number;
  #rateHz = 0;
  #startMs = 0;
  #anchorMs: number | null = null;
  #user: Track | null = null;
  #assistant: Track | null = null;
  #flushed = 0;
  #mono: WavFileWriter | null = null;
  #stereo: WavFileWriter | null = null;
  #monoBlock = new Int16Array(0);
  #stereoBlock = new Int16Array(0);
  #blockFrames = 0;
  #blockUsed = 0;
  #dropped = 0;
  #finished = false;

  constructor(options: CallRecordingOptions) {
    this.#options = options;
    this.#bufferSeconds = options.bufferSeconds ?? 5;
  }

  get started(): boolean {
    return this.#rateHz !== 0;
  }

  /**
   * Starts the timeline at `nowMs` (the clock's time the call went in progress), so audio that
   * comes later is placed after silence; without it the timeline starts with the first audio.
   * Ignored once audio has been recorded.
   */
  startAt(nowMs: number): void {
    if (this.#rateHz === 0) {
      this.#anchorMs = nowMs;
    }
  }

  /** Audio as it crossed the transport (copied; `samples` may be reused by the caller). */
  push(role: 'user' | 'assistant', samples: Int16Array, sampleRateHz: number): void {
    if (this.#finished || samples.length === 0) {
      return;
    }
    if (this.#rateHz === 0) {
      this.#begin(sampleRateHz, samples.length);
    } else if (sampleRateHz !== this.#rateHz) {
      this.#dropped += samples.length;
      return;
    }
    const track = role === 'user' ? this.#user! : this.#assistant!;
    const expected = Math.round(((this.#options.nowMs() - this.#startMs) * this.#rateHz) / 1000);
    const gap = expected - samples.length - track.total;
    if (gap > 0) {
      this.#append(track, null, 0, gap);
    }
    this.#append(track, samples, 0, samples.length);
  }

  /** Writes what is left (the shorter track padded with silence) and closes the files. */
  async finish(): Promise<RecordingResult | null> {
    if (this.#finished) {
      return null;
    }
    this.#finished = true;
    const user = this.#user;
    const assistant = this.#assistant;
    if (user === null || assistant === null) {
      return null;
    }
    const end = Math.max(user.total, assistant.total);
    this.#append(user, null, 0, end - user.total);
    this.#append(assistant, null, 0, end - assistant.total);
    this.#flush();
    this.#writeBlock();
    const [mono, stereo] = await Promise.all([
      this.#mono?.finish() ?? null,
      this.#stereo?.finish() ?? null,
    ]);
    return {
      sampleRateHz: this.#rateHz,
      frames: this.#flushed,
      durationMs: (this.#flushed * 1000) / this.#rateHz,
      mono,
      stereo,
      droppedSamples: this.#dropped,
      droppedBytes: (this.#mono?.droppedBytes ?? 0) + (this.#stereo?.droppedBytes ?? 0),
    };
  }

  /** Removes the files (the call is not to be recorded after all). */
  async discard(): Promise<void> {
    this.#finished = true;
    await Promise.all([this.#mono?.discard(), this.#stereo?.discard()]);
  }

  #begin(sampleRateHz: number, firstSamples: number): void {
    this.#rateHz = sampleRateHz;
    // Without an anchor the first chunk ends now: the timeline starts when it began.
    this.#startMs = this.#anchorMs ?? this.#options.nowMs() - (firstSamples * 1000) / sampleRateHz;
    const capacity = Math.max(1, Math.round(sampleRateHz * this.#bufferSeconds));
    this.#user = new Track(capacity);
    this.#assistant = new Track(capacity);
    this.#blockFrames = Math.max(1, Math.round(sampleRateHz * BLOCK_SECONDS));
    if (this.#options.monoPath !== undefined) {
      this.#mono = new WavFileWriter(this.#options.monoPath, 1, sampleRateHz);
      this.#monoBlock = new Int16Array(this.#blockFrames);
    }
    if (this.#options.stereoPath !== undefined) {
      this.#stereo = new WavFileWriter(this.#options.stereoPath, 2, sampleRateHz);
      this.#stereoBlock = new Int16Array(this.#blockFrames * 2);
    }
  }

  /** Appends `count` samples of `source` (silence when null), flushing as the ring fills. */
  #append(track: Track, source: Int16Array | null, offset: number, count: number): void {
    const capacity = track.ring.length;
    let done = 0;
    while (done < count) {
      let space = capacity - (track.total - this.#flushed);
      if (space === 0) {
        this.#flush();
        space = capacity - (track.total - this.#flushed);
        if (space === 0) {
          // The other track is a whole buffer behind: give it silence so this one can go on.
          const other = track === this.#user ? this.#assistant! : this.#user!;
          this.#append(other, null, 0, track.total - other.total);
          this.#flush();
          space = capacity - (track.total - this.#flushed);
        }
      }
      const n = Math.min(space, count - done);
      let at = track.total % capacity;
      for (let i = 0; i < n; i++) {
        track.ring[at] = source === null ? 0 : source[offset + done + i]!;
        at = at + 1 === capacity ? 0 : at + 1;
      }
      track.total += n;
      done += n;
    }
    this.#flush();
  }

  /** Mixes and interleaves every frame both tracks have. */
  #flush(): void {
    const user = this.#user!;
    const assistant = this.#assistant!;
    const end = Math.min(user.total, assistant.total);
    const capacity = user.ring.length;
    let mono = this.#mono === null ? null : this.#monoBlock;
    let stereo = this.#stereo === null ? null : this.#stereoBlock;
    for (let frame = this.#flushed; frame < end; frame++) {
      const at = frame % capacity;
      const u = user.ring[at]!;
      const a = assistant.ring[at]!;
      const used = this.#blockUsed;
      if (mono !== null) {
        const sum = u + a;
        mono[used] = sum > 32767 ? 32767 : sum < -32768 ? -32768 : sum;
      }
      if (stereo !== null) {
        stereo[used * 2] = u;
        stereo[used * 2 + 1] = a;
      }
      this.#blockUsed = used + 1;
      if (this.#blockUsed === this.#blockFrames) {
        this.#writeBlock();
        mono = this.#mono === null ? null : this.#monoBlock;
        stereo = this.#stereo === null ? null : this.#stereoBlock;
      }
    }
    this.#flushed = Math.max(this.#flushed, end);
  }

  /** Hands the filled block to the writers and starts a new one. */
  #writeBlock(): void {
    const used = this.#blockUsed;
    if (used === 0) {
      return;
    }
    if (this.#mono !== null) {
      this.#mono.write(this.#monoBlock, used);
      this.#monoBlock = new Int16Array(this.#blockFrames);
    }
    if (this.#stereo !== null) {
      this.#stereo.write(this.#stereoBlock, used * 2);
      this.#stereoBlock = new Int16Array(this.#blockFrames * 2);
    }
    this.#blockUsed = 0;
  }
}
