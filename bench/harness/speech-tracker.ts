/**
 * Finds speech in one direction of a call's audio, from the audio alone, as it arrives.
 *
 * Time model: each chunk is pushed with `atMs`, the time its first sample is heard (for received
 * audio, its arrival; for sent audio, when its first sample was captured). A chunk plays from
 * max(atMs, end of the previous chunk): a player with no jitter buffer. When a chunk arrives after
 * the previous one finished, the gap is a hole (an underrun a listener hears as a click or drop).
 *
 * Detection: the RMS level of each window (default 10 ms) against a threshold (dBFS). Speech starts
 * at the first loud window once `minSpeechMs` of loud windows are seen, and ends at the end of the
 * last loud window once `hangoverMs` passes without one (holes count as silence). Holes and late
 * chunks are kept only when they fall inside a speech segment. Per chunk, nothing is allocated.
 */
export interface SpeechTrackerOptions {
  sampleRateHz: number;
  /** Analysis window. Default 10 ms. */
  windowMs?: number;
  /** A window is speech when its RMS level reaches this. Default -45 dBFS. */
  thresholdDbfs?: number;
  /** Silence that ends a segment. Default 250 ms. */
  hangoverMs?: number;
  /** Loud time needed before a segment counts (clicks are ignored). Default 30 ms. */
  minSpeechMs?: number;
  /** A chunk is late when it arrives more than this after the previous chunk's duration. Default 10 ms. */
  lateToleranceMs?: number;
  /** Shorter holes are not reported. Default 5 ms. */
  minHoleMs?: number;
  /** Quiet stretches inside a segment at least this long are reported as silent gaps. Default 100 ms. */
  minSilentGapMs?: number;
  onSpeechStart?: (startMs: number) => void;
  onSpeechEnd?: (segment: SpeechSegment) => void;
}

export interface SpeechSegment {
  startMs: number;
  endMs: number;
}

/** A stretch inside speech where no audio was playing. */
export interface AudioHole {
  startMs: number;
  endMs: number;
}

/** A chunk inside speech that arrived `lateByMs` after the previous chunk's duration had passed. */
export interface LateChunk {
  atMs: number;
  lateByMs: number;
}

/** Each list keeps at most this many entries (a pathological stream cannot grow memory). */
const MAX_EVENTS = 10_000;
const SILENCE = 0;
const CANDIDATE = 1;
const SPEECH = 2;

export class SpeechTracker {
  readonly segments: SpeechSegment[] = [];
  readonly holes: AudioHole[] = [];
  readonly lateChunks: LateChunk[] = [];
  /** Quiet stretches inside segments (pauses in speech, or silence sent while the audio stalled). */
  readonly silentGaps: AudioHole[] = [];
  readonly sampleRateHz: number;
  readonly #windowSamples: number;
  readonly #thresholdSquare: number;
  readonly #hangoverMs: number;
  readonly #minSpeechMs: number;
  readonly #lateToleranceMs: number;
  readonly #minHoleMs: number;
  readonly #minSilentGapMs: number;
  readonly #onStart: ((startMs: number) => void) | undefined;
  readonly #onEnd: ((segment: SpeechSegment) => void) | undefined;
  #state = SILENCE;
  #startMs = 0;
  #loudMs = 0;
  #lastLoudEndMs = 0;
  #playEndMs = Number.NaN;
  #lastArrivalMs = Number.NaN;
  #lastDurationMs = 0;
  /** Holes and late chunks seen since the segment started; kept if inside it when it ends. */
  readonly #pendingHoles: AudioHole[] = [];
  readonly #pendingLate: LateChunk[] = [];
  readonly #pendingGaps: AudioHole[] = [];
  #chunkCount = 0;

  constructor(options: SpeechTrackerOptions) {
    const { sampleRateHz } = options;
    if (!Number.isInteger(sampleRateHz) || sampleRateHz < 1000 || sampleRateHz > 192_000) {
      throw new RangeError(
        `sampleRateHz must be an integer from 1000 to 192000, got ${sampleRateHz}`,
      );
    }
    this.sampleRateHz = sampleRateHz;
    const windowMs = positive(options.windowMs ?? 10, 'windowMs');
    this.#windowSamples = Math.max(1, Math.round((windowMs * sampleRateHz) / 1000));
    const threshold = 32768 * 10 ** ((options.thresholdDbfs ?? -45) / 20);
    this.#thresholdSquare = threshold * threshold;
    this.#hangoverMs = positive(options.hangoverMs ?? 250, 'hangoverMs');
    this.#minSpeechMs = nonNegative(options.minSpeechMs ?? 30, 'minSpeechMs');
    this.#lateToleranceMs = nonNegative(options.lateToleranceMs ?? 10, 'lateToleranceMs');
    this.#minHoleMs = nonNegative(options.minHoleMs ?? 5, 'minHoleMs');
    this.#minSilentGapMs = positive(options.minSilentGapMs ?? 100, 'minSilentGapMs');
    this.#onStart = options.onSpeechStart;
    this.#onEnd = options.onSpeechEnd;
  }

  /** Confirmed speech is playing (or its hangover has not run out). */
  get speaking(): boolean {
    return this.#state === SPEECH;
  }

  /** Start of the current segment, or NaN when not speaking. */
  get currentStartMs(): number {
    return this.#state === SPEECH ? this.#startMs : Number.NaN;
  }

  /** When the audio pushed so far ends playing (NaN before the first chunk). */
  get playEndMs(): number {
    return this.#playEndMs;
  }

  get chunkCount(): number {
    return this.#chunkCount;
  }

  push(samples: Int16Array, atMs: number): void {
    if (samples.length === 0) {
      return;
    }
    this.#chunkCount++;
    const durationMs = (samples.length * 1000) / this.sampleRateHz;
    const inSegment = this.#state !== SILENCE;
    if (!Number.isNaN(this.#lastArrivalMs) && inSegment) {
      const lateByMs = atMs - this.#lastArrivalMs - this.#lastDurationMs;
      if (lateByMs > this.#lateToleranceMs && this.#pendingLate.length < MAX_EVENTS) {
        this.#pendingLate.push({ atMs: Math.max(atMs, this.#playEndMs), lateByMs });
      }
    }
    this.#lastArrivalMs = atMs;
    this.#lastDurationMs = durationMs;
    let startMs = atMs;
    if (!Number.isNaN(this.#playEndMs)) {
      if (
        atMs - this.#playEndMs >= this.#minHoleMs &&
        inSegment &&
        this.#pendingHoles.length < MAX_EVENTS
      ) {
        this.#pendingHoles.push({ startMs: this.#playEndMs, endMs: atMs });
      }
      startMs = Math.max(atMs, this.#playEndMs);
    }
    this.#playEndMs = startMs + durationMs;
    const msPerSample = 1000 / this.sampleRateHz;
    for (let offset = 0; offset < samples.length; offset += this.#windowSamples) {
      const end = Math.min(samples.length, offset + this.#windowSamples);
      let sumSquares = 0;
      for (let i = offset; i < end; i++) {
        const sample = samples[i]!;
        sumSquares += sample * sample;
      }
      const windowStartMs = startMs + offset * msPerSample;
      const windowEndMs = startMs + end * msPerSample;
      if (sumSquares / (end - offset) >= this.#thresholdSquare) {
        this.#loud(windowStartMs, windowEndMs);
      } else {
        this.#silentUntil(windowEndMs);
      }
    }
  }

  /** No audio until `nowMs`: lets a segment end when the sender simply stops sending. */
  advanceTo(nowMs: number): void {
    if (Number.isNaN(this.#playEndMs) || nowMs < this.#playEndMs) {
      return;
    }
    this.#silentUntil(nowMs);
  }

  /** Ends the open segment (at its last loud window), as at the end of a call. */
  finish(): void {
    if (this.#state !== SILENCE) {
      this.#silentUntil(this.#lastLoudEndMs + this.#hangoverMs);
    }
  }

  #loud(windowStartMs: number, windowEndMs: number): void {
    this.#silentUntil(windowStartMs);
    if (this.#state === SILENCE) {
      this.#state = CANDIDATE;
      this.#startMs = windowStartMs;
      this.#loudMs = 0;
      this.#pendingHoles.length = 0;
      this.#pendingLate.length = 0;
      this.#pendingGaps.length = 0;
    } else if (
      windowStartMs - this.#lastLoudEndMs >= this.#minSilentGapMs &&
      this.#pendingGaps.length < MAX_EVENTS
    ) {
      this.#pendingGaps.push({ startMs: this.#lastLoudEndMs, endMs: windowStartMs });
    }
    this.#loudMs += windowEndMs - windowStartMs;
    this.#lastLoudEndMs = windowEndMs;
    if (this.#state === CANDIDATE && this.#loudMs >= this.#minSpeechMs) {
      this.#state = SPEECH;
      this.#onStart?.(this.#startMs);
    }
  }

  #silentUntil(atMs: number): void {
    if (this.#state === SILENCE || atMs - this.#lastLoudEndMs < this.#hangoverMs) {
      return;
    }
    if (this.#state === SPEECH) {
      const segment = { startMs: this.#startMs, endMs: this.#lastLoudEndMs };
      if (this.segments.length < MAX_EVENTS) {
        this.segments.push(segment);
      }
      for (const hole of this.#pendingHoles) {
        if (hole.endMs <= segment.endMs && this.holes.length < MAX_EVENTS) {
          this.holes.push(hole);
        }
      }
      for (const late of this.#pendingLate) {
        if (late.atMs < segment.endMs && this.lateChunks.length < MAX_EVENTS) {
          this.lateChunks.push(late);
        }
      }
      for (const gap of this.#pendingGaps) {
        if (this.silentGaps.length < MAX_EVENTS) {
          this.silentGaps.push(gap);
        }
      }
      this.#onEnd?.(segment);
    }
    this.#pendingHoles.length = 0;
    this.#pendingLate.length = 0;
    this.#pendingGaps.length = 0;
    this.#state = SILENCE;
  }
}

function positive(value: number, name: string): number {
  if (!Number.isFinite(value) || value <= 0) {
    throw new RangeError(`${name} must be a positive number, got ${value}`);
  }
  return value;
}

function nonNegative(value: number, name: string): number {
  if (!Number.isFinite(value) || value < 0) {
    throw new RangeError(`${name} must be a number ≥ 0, got ${value}`);
  }
  return value;
}
