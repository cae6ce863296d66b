/**
 * Debounced speech detection over a stream of speech probabilities with timestamps:
 *
 *   QUIET ──p ≥ on──▶ STARTING ──held startMs──▶ SPEAKING ──p < off──▶ STOPPING ──held stopMs──▶ QUIET
 *                       │ p < off → QUIET                      ▲  p ≥ on → SPEAKING  │
 *
 * Hysteresis: speech begins at `onThreshold` and ends only below `offThreshold`; in STARTING a
 * probability between the two keeps the candidate alive, in STOPPING it does not bring speech back.
 * Events carry the time speech really started (start of the first window at or above `on`) or
 * stopped (start of the first window below `off`), and the time the decision was made.
 */

export type VadPhase = 'quiet' | 'starting' | 'speaking' | 'stopping';

export interface VadStateMachineOptions {
  /** Speech must hold this long before SPEAKING. Default 200 ms. */
  startMs?: number;
  /** Silence must hold this long before QUIET. Default 500 ms. */
  stopMs?: number;
  /** Probability at which speech begins. Default 0.5. */
  onThreshold?: number;
  /** Probability below which speech ends. Default 0.35. */
  offThreshold?: number;
}

export interface VadEvent {
  type: 'speech-start' | 'speech-stop';
  /** When speech really started or stopped, on the stream's clock. */
  atMs: number;
  /** End of the window that confirmed it: `decidedAtMs − atMs` is the debounce delay. */
  decidedAtMs: number;
}

export class VadStateMachine {
  readonly startMs: number;
  readonly stopMs: number;
  readonly onThreshold: number;
  readonly offThreshold: number;
  private currentPhase: VadPhase = 'quiet';
  private candidateMs = 0;
  /** Reused by every `update`: copy it to keep it. */
  private readonly event: VadEvent = { type: 'speech-start', atMs: 0, decidedAtMs: 0 };

  constructor(options: VadStateMachineOptions = {}) {
    this.startMs = options.startMs ?? 200;
    this.stopMs = options.stopMs ?? 500;
    this.onThreshold = options.onThreshold ?? 0.5;
    this.offThreshold = options.offThreshold ?? 0.35;
    if (!(this.offThreshold <= this.onThreshold)) {
      throw new RangeError(
        `offThreshold ${this.offThreshold} must not exceed onThreshold ${this.onThreshold}`,
      );
    }
    if (!(this.startMs >= 0 && this.stopMs >= 0)) {
      throw new RangeError('startMs and stopMs must be non-negative');
    }
  }

  get phase(): VadPhase {
    return this.currentPhase;
  }

  /** True in SPEAKING and STOPPING (speech has been confirmed and not yet ended). */
  get inSpeech(): boolean {
    return this.currentPhase === 'speaking' || this.currentPhase === 'stopping';
  }

  /**
   * Feeds the probability of the window [startMs, endMs). Returns an event when speech is
   * confirmed to have started or stopped, else null. The event object is reused.
   */
  update(probability: number, startMs: number, endMs: number): VadEvent | null {
    switch (this.currentPhase) {
      case 'quiet':
        if (probability >= this.onThreshold) {
          this.currentPhase = 'starting';
          this.candidateMs = startMs;
          return this.confirmStart(endMs);
        }
        return null;
      case 'starting':
        if (probability < this.offThreshold) {
          this.currentPhase = 'quiet';
          return null;
        }
        return this.confirmStart(endMs);
      case 'speaking':
        if (probability < this.offThreshold) {
          this.currentPhase = 'stopping';
          this.candidateMs = startMs;
          return this.confirmStop(endMs);
        }
        return null;
      case 'stopping':
        if (probability >= this.onThreshold) {
          this.currentPhase = 'speaking';
          return null;
        }
        return this.confirmStop(endMs);
    }
  }

  /**
   * Ends the stream: if speech was confirmed, returns the stop event (at the pending stop
   * candidate, or at `endMs` while still speaking). Resets to QUIET.
   */
  finish(endMs: number): VadEvent | null {
    const phase = this.currentPhase;
    this.currentPhase = 'quiet';
    if (phase === 'speaking' || phase === 'stopping') {
      return this.emit('speech-stop', phase === 'stopping' ? this.candidateMs : endMs, endMs);
    }
    return null;
  }

  reset(): void {
    this.currentPhase = 'quiet';
    this.candidateMs = 0;
  }

  private confirmStart(endMs: number): VadEvent | null {
    if (endMs - this.candidateMs < this.startMs) {
      return null;
    }
    this.currentPhase = 'speaking';
    return this.emit('speech-start', this.candidateMs, endMs);
  }

  private confirmStop(endMs: number): VadEvent | null {
    if (endMs - this.candidateMs < this.stopMs) {
      return null;
    }
    this.currentPhase = 'quiet';
    return this.emit('speech-stop', this.candidateMs, endMs);
  }

  private emit(type: VadEvent['type'], atMs: number, decidedAtMs: number): VadEvent {
    this.event.type = type;
    this.event.atMs = atMs;
    this.event.decidedAtMs = decidedAtMs;
    return this.event;
  }
}
